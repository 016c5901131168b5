"""Answer relevancy's two questions in layouts that read the answer once: candidates against
rag-6 on WikiEval and RGB (English and Chinese, long answers, fixed dodges), under the rule
written before scoring (docs/decisions.md; figures in docs/measurements/judge-quality.md).
Neither candidate passed, so their wordings live here, not in a prompt set.

Every row is asked, in this order, so that each later prompt shares the earlier one's
prefix and costs only its own tail:
  nc6  the answer alone, then the noncommittal question (rag-6's, and rag-8's)
  relB the answer, then the question and relevancy's question (rag-8's relevancy)
  rel6 the question, then the answer, then relevancy's question (rag-6's relevancy)
  nc7  the question and the answer, then the noncommittal question (rag-7's)
  ncD  the question and the answer, then a reworded noncommittal question
The rows (`rows()`): WikiEval's 100 answer-relevancy rows; for the first 40 RGB questions
their reference answer (label 1) against the reference of the question 25 places on
(label 0), and for the first 20 a passage labelled positive (it holds the answer) against
one labelled negative (same topic, no answer), each the one nearest 200 characters; four
fixed dodges in each language on the first 12 questions of each.

Usage:
  python scripts/answer_layout_bench.py count BENCH            tokens the scoring evaluates
  python scripts/answer_layout_bench.py score BENCH OUT.jsonl [GROUP,...]  (again: goes on)
  python scripts/answer_layout_bench.py analyse OUT.jsonl [MORE.jsonl ...]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from localeval.backends.llama_count import CountingLlamaJudge
from localeval.backends.llama_judge import LlamaJudge
from localeval.backends.llama_settings import LlamaCppSettings
from localeval.config import load_models_config
from localeval.judge import Prompt
from localeval.prompts import rag
from localeval.prompts.sets import RAG_6
from localeval.stats import bootstrap_statistic, pair_accuracy, roc_auc
from localeval.text import detect_language

JUDGE = "qwen2.5-coder-1.5b"
DODGES_EN = (
    "I don't know.",
    "I'm sorry, but I cannot answer that question based on the information I have.",
    "I am not sure about this. The provided documents do not contain enough information "
    "to answer the question, so I cannot give a reliable answer.",
    "Unfortunately, I do not have access to that information.",
)
DODGES_ZH = (
    "我不知道。",
    "抱歉，根据我所掌握的信息，我无法回答这个问题。",
    "我不太确定。提供的资料中没有足够的信息来回答这个问题，所以我无法给出可靠的答案。",
    "很遗憾，我没有这方面的信息。",
)
#: the rows the rule fixed before scoring (docs/decisions.md): questions of each kind
ZH_SHORT, ZH_LONG, DODGE_QUESTIONS = 40, 20, 12
OFFSET = 25  # the other question whose reference is the wrong answer
Ask = Callable[[str, str, str], Prompt]


def answer_then_question(question: str, answer: str, language: str) -> Prompt:
    """Candidate 1 (rag-8): rag-6's relevancy words with the answer first, so that the
    prompt begins with the noncommittal check's own prefix (the answer alone)."""
    return Prompt.of(
        rag.SYSTEM_JUDGE,
        rag.answer_segment(answer, language),
        "\n\n"
        + rag.question_segment(question, language)
        + "Does the answer above answer the question? Answer Yes or No.",
    )


def question_answer_only_noncommittal(question: str, answer: str, language: str) -> Prompt:
    """Candidate 2: rag-7's layout, the noncommittal question reworded."""
    return Prompt.of(
        rag.SYSTEM_JUDGE,
        rag.question_segment(question, language),
        rag.answer_segment(answer, language),
        "\n\nDoes the answer above give no answer at all, only saying that it does not know "
        "or cannot answer? Answer Yes or No.",
    )


PROMPTS: dict[str, Ask] = {
    "nc6": rag.answer_noncommittal,
    "relB": answer_then_question,
    "rel6": RAG_6.rag.answer_answers,
    "nc7": rag.question_answer_noncommittal,
    "ncD": question_answer_only_noncommittal,
}
#: each set's (noncommittal, relevancy) prompts
SETS = {
    "rag-6": ("nc6", "rel6"),
    "rag-8 (answer first)": ("nc6", "relB"),
    "reworded (D)": ("ncD", "rel6"),
    "rag-7 (reference)": ("nc7", "rel6"),
}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _nearest(passages: list[str], length: int = 200) -> str:
    return min(passages, key=lambda p: (abs(len(p) - length), p))


def rows(bench: Path) -> Iterator[dict[str, Any]]:
    """The rows, each with its group, label, pair and whether it is a dodge."""
    wiki = _jsonl(bench / "wikieval.answer_relevancy.jsonl")
    for row in wiki:
        yield {
            "id": row["id"],
            "group": "en",
            "question": row["question"],
            "answer": row["answer"],
            "label": row["label"],
            "pair": row["pair_id"],
        }
    questions: list[dict[str, Any]] = []
    for row in _jsonl(bench / "rgb_zh.context_precision.jsonl"):
        meta = row.get("meta") or {}
        new = all(q["question"] != row["question"] for q in questions)
        if meta.get("all_positive") and meta.get("all_negative") and new:
            questions.append(row)
    for i, row in enumerate(questions[:ZH_SHORT]):
        other = questions[(i + OFFSET) % len(questions)]
        meta = row["meta"]
        kinds = [("zh-short", row["reference_answer"], other["reference_answer"])]
        if i < ZH_LONG:
            kinds.append(
                ("zh-long", _nearest(meta["all_positive"]), _nearest(meta["all_negative"]))
            )
        for group, good, bad in kinds:
            for label, answer in ((1, good), (0, bad)):
                yield {
                    "id": f"{row['id']}-{group}-{label}",
                    "group": group,
                    "question": row["question"],
                    "answer": answer,
                    "label": label,
                    "pair": row["id"],
                }
    firsts = {r["pair_id"]: r for r in wiki}
    en_questions = [r["question"] for r in list(firsts.values())[:DODGE_QUESTIONS]]
    zh_questions = [q["question"] for q in questions[:DODGE_QUESTIONS]]
    for group, asked, dodges in (
        ("en-dodge", en_questions, DODGES_EN),
        ("zh-dodge", zh_questions, DODGES_ZH),
    ):
        for i, question in enumerate(asked):
            for d, dodge in enumerate(dodges):
                yield {
                    "id": f"{group}-{i}-{d}",
                    "group": group,
                    "question": question,
                    "answer": dodge,
                    "label": 0,
                    "pair": None,
                }


def _judge(counting: bool) -> LlamaJudge:
    settings = load_models_config().judge(JUDGE).settings
    assert isinstance(settings, LlamaCppSettings)
    # nothing written to the cache folder; one thread, as another judge shares the 2 cores
    settings = replace(settings, state_cache_gb=0, threads=1)
    return (CountingLlamaJudge if counting else LlamaJudge)(JUDGE, settings)


def count(bench: Path) -> None:
    judge = _judge(counting=True)
    by_group: dict[str, int] = {}
    for row in rows(bench):
        language = detect_language(row["question"])
        before = judge.usage.prompt_tokens
        for ask in PROMPTS.values():
            judge.yes_probability(ask(row["question"], row["answer"], language))
        by_group[row["group"]] = by_group.get(row["group"], 0) + judge.usage.prompt_tokens - before
    print(json.dumps(by_group), "total", sum(by_group.values()))


def score(bench: Path, out: Path, groups: set[str] | None) -> None:
    """Score the rows (of `groups` only, if given) not in `out` yet, appending to it."""
    done = {r["id"] for r in _jsonl(out)} if out.exists() else set()
    judge = _judge(counting=False)
    with out.open("a", encoding="utf-8") as sink:
        for row in rows(bench):
            if row["id"] in done or (groups and row["group"] not in groups):
                continue
            language = detect_language(row["question"])
            for name, ask in PROMPTS.items():
                row[name] = judge.yes_probability(ask(row["question"], row["answer"], language))
            row["language"] = language
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.flush()
    print("prompt tokens", judge.usage.prompt_tokens, "calls", judge.usage.judge_calls)


def _share(values: list[Any]) -> float | None:
    """The mean of `values` (True counts 1); None for none."""
    return sum(values) / len(values) if values else None


def figures(scored: list[dict[str, Any]], nc: str, rel: str) -> dict[str, float | None]:
    """One set's figures: the metric's score is 0 when P(noncommittal) >= 0.5."""

    def metric(row: dict[str, Any]) -> float:
        return 0.0 if row[nc] >= 0.5 else row[rel]

    out: dict[str, float | None] = {}
    for group in ("en", "zh-short", "zh-long", "zh"):
        part = [
            r
            for r in scored
            if r["group"] == group or (group == "zh" and r["group"] in ("zh-short", "zh-long"))
        ]
        pairs: dict[Any, dict[int, float]] = {}
        for r in part:
            pairs.setdefault((r["group"], r["pair"]), {})[r["label"]] = metric(r)
        whole = [p for p in pairs.values() if len(p) == 2]
        out[f"{group} pairs"] = pair_accuracy([p[1] for p in whole], [p[0] for p in whole])
        out[f"{group} AUC"] = roc_auc([metric(r) for r in part], [r["label"] for r in part])
        out[f"{group} committed flagged"] = _share([r[nc] >= 0.5 for r in part])
    for group in ("en-dodge", "zh-dodge"):
        part = [r for r in scored if r["group"] == group]
        out[f"{group} flagged"] = _share([r[nc] >= 0.5 for r in part])
        out[f"{group} mean score"] = _share([metric(r) for r in part])
    return out


def auc_difference(
    scored: list[dict[str, Any]], group: str, one: tuple[str, str], other: tuple[str, str]
) -> tuple[float, float] | None:
    """A bootstrap interval of one set's ROC AUC minus another's, resampling whole pairs."""
    part = [r for r in scored if r["group"] == group or r["group"].startswith(group + "-")]
    part = [r for r in part if "dodge" not in r["group"]]
    keys = sorted({(r["group"], str(r["pair"])) for r in part})
    by_pair = {k: [r for r in part if (r["group"], str(r["pair"])) == k] for k in keys}

    def difference(indices: Any) -> float | None:
        drawn = [r for i in indices for r in by_pair[keys[i]]]
        labels = [r["label"] for r in drawn]
        aucs = [roc_auc([0.0 if r[nc] >= 0.5 else r[rel] for r in drawn], labels)
                for nc, rel in (one, other)]  # fmt: skip
        return None if None in aucs else aucs[0] - aucs[1]  # type: ignore[operator]

    return bootstrap_statistic(difference, len(keys), resamples=2000)


def analyse(outs: list[Path]) -> None:
    """The table of each set's figures over the rows scored in `outs`."""
    scored = list({r["id"]: r for out in outs for r in _jsonl(out)}.values())
    table = {name: figures(scored, nc, rel) for name, (nc, rel) in SETS.items()}
    names = list(table)
    print("| figure | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for key in table["rag-6"]:
        cells = [f"{v:.3f}" if isinstance(v := table[n][key], float) else "-" for n in names]
        print(f"| {key} | " + " | ".join(cells) + " |")
    for group in ("en", "zh"):
        for name in names[1:]:
            low_high = auc_difference(scored, group, SETS[name], SETS["rag-6"])
            print(f"{group} AUC, {name} - rag-6, 95% interval over pairs: {low_high}")
    print(
        "rows:",
        {g: sum(r["group"] == g for r in scored) for g in sorted({r["group"] for r in scored})},
    )


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "count":
        count(Path(args[0]))
    elif command == "score":
        score(Path(args[0]), Path(args[1]), set(args[2].split(",")) if len(args) > 2 else None)
    elif command == "analyse":
        analyse([Path(a) for a in args])
    else:
        raise SystemExit(__doc__)
