"""Build the prompt-tuning loop's long-context set from the bench folder: N samples (default
200), each with 5,400-9,000 characters of contexts (1,000+ shared tokens for the default
judge), and two versions of the answers, every answer changed between them
(docs/measurements/speed.md, "Contexts kept across runs").

The samples, in this order, until N:
- WikiEval, 50 questions: v1 its answer, v2 its ungrounded answer (multi-sentence answers);
  the reference is v1's answer, as in the 30-sample set.
- RAGChecker's meta-evaluation, the questions whose two systems' answers are both non-empty
  and differ (132): v1 `answer_a`, v2 `answer_b` (long answers); the reference is its
  `reference_answer`, which also stands as the first chunk, since the set ships no contexts.
- HaluEval QA: v1 the right answer, v2 the hallucinated one (short answers), for the rest.

Each sample's own context comes first, then other WikiEval questions' contexts in turn
(the next ones after its own for WikiEval, a sample's own rotation for the others), a
chunk that would pass 9,000 characters skipped, until 5,400. Deterministic: the same bench
files give the same set.

Usage: python scripts/build_loop_set.py BENCH OUT_DIR [N [EVERY]]
  writes OUT_DIR/v1.jsonl and v2.jsonl; with EVERY also v1-everyEVERY.jsonl and
  v2-everyEVERY.jsonl, every EVERY-th sample from the first (a subset for real runs)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

MIN_CHARS = 5_400
MAX_CHARS = 9_000
Row = dict[str, object]


def _rows(bench: Path, name: str) -> list[Row]:
    with (bench / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _pairs(rows: list[Row]) -> list[tuple[Row, Row]]:
    """(label 1, label 0) rows of each pair_id, in the file's order."""
    by_pair: dict[object, dict[object, Row]] = {}
    for row in rows:
        by_pair.setdefault(row["pair_id"], {})[row["label"]] = row
    return [(p[1], p[0]) for p in by_pair.values() if 1 in p and 0 in p]


def _wikieval(bench: Path) -> Iterator[tuple[str, list[str], str, str, str]]:
    for good, ungrounded in _pairs(_rows(bench, "wikieval.faithfulness.jsonl")):
        ctx = list(good["contexts"])  # type: ignore[call-overload]
        yield "wikieval", ctx, str(good["question"]), str(good["answer"]), str(ungrounded["answer"])


def _ragchecker(bench: Path) -> Iterator[tuple[str, list[str], str, str, str]]:
    seen: set[str] = set()
    for row in _rows(bench, "ragchecker.answer_correctness.pairwise.jsonl"):
        question = str(row["question"])
        a, b = str(row["answer_a"]).strip(), str(row["answer_b"]).strip()
        if question in seen or not a or not b or a == b:
            continue
        seen.add(question)
        reference = str(row["reference_answer"])
        yield "ragchecker", [reference], question, a, b


def _halueval(bench: Path) -> Iterator[tuple[str, list[str], str, str, str]]:
    for right, hallucinated in _pairs(_rows(bench, "halueval_qa.faithfulness.jsonl")):
        ctx = list(right["contexts"])  # type: ignore[call-overload]
        yield (
            "halueval",
            ctx,
            str(right["question"]),
            str(right["answer"]),
            str(hallucinated["answer"]),
        )


def _padded(own: list[str], pool: list[str], start: int) -> list[str]:
    """own, then pool's chunks from start on (skipping own and any that would pass MAX_CHARS)
    until MIN_CHARS."""
    chunks = list(own)
    for k in range(len(pool)):
        size = sum(len(c) for c in chunks)
        if size >= MIN_CHARS:
            break
        chunk = pool[(start + k) % len(pool)]
        if chunk not in chunks and size + len(chunk) <= MAX_CHARS:
            chunks.append(chunk)
    return chunks


def build(bench: Path, n: int) -> tuple[list[Row], list[Row]]:
    pool = [str(r["contexts"][0]) for r, _ in _pairs(_rows(bench, "wikieval.faithfulness.jsonl"))]  # type: ignore[index]
    sources = [*_wikieval(bench), *_ragchecker(bench), *_halueval(bench)][:n]
    if len(sources) < n:
        raise SystemExit(f"the bench folder gives {len(sources)} samples, fewer than {n}")
    v1: list[Row] = []
    v2: list[Row] = []
    for i, (source, own, question, first, second) in enumerate(sources):
        contexts = _padded(own, pool, i + 1)
        # RAGChecker's own chunk is its reference answer; the others' reference is v1's answer
        reference = own[0] if source == "ragchecker" else first
        common: Row = {
            "sample_id": f"{source}-{i:03d}",
            "category": source,
            "question": question,
            "contexts": contexts,
        }
        v1.append({**common, "answer": first, "reference_answer": reference})
        v2.append({**common, "answer": second, "reference_answer": reference})
    return v1, v2


def _write(path: Path, rows: list[Row]) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main(argv: list[str]) -> None:
    if len(argv) not in (2, 3, 4):
        raise SystemExit(__doc__.split("Usage: ")[-1] if __doc__ else "usage")
    bench, out = Path(argv[0]), Path(argv[1])
    n = int(argv[2]) if len(argv) > 2 else 200
    every = int(argv[3]) if len(argv) > 3 else 0
    out.mkdir(parents=True, exist_ok=True)
    versions = build(bench, n)
    for name, rows in zip(("v1", "v2"), versions, strict=True):
        _write(out / f"{name}.jsonl", rows)
        if every:
            _write(out / f"{name}-every{every}.jsonl", rows[::every])
    chars = sorted(len("".join(r["contexts"])) for r in versions[0])  # type: ignore[arg-type]
    print(
        f"{n} samples; contexts {chars[0]}-{chars[-1]} characters (median {chars[len(chars) // 2]})"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
