"""`localeval generate` on the command line, and `evaluate` on what it and `answer` write."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from fakes import FakeEmbedder, HashJudge
from run_db import Connections
from standins import StandIns
from testset_fakes import (
    EN_TOPICS,
    ZH_TOPICS,
    CachedStandIn,
    WriterJudge,
    json_lines,
    manual,
    write_docs,
)

from localeval.backends import (
    register_embedder_backend,
    register_judge_backend,
    unregister_backend,
)
from localeval.cli import main
from localeval.testset.questions import read_corpus
from localeval.text import detect_language

FIELDS = [
    "sample_id", "kind", "category", "question", "reference_answer", "answer", "contexts",
    "reference_contexts", "source",
]  # fmt: skip


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = write_docs(
        tmp_path / "docs",
        {
            "ops/manual.md": manual(EN_TOPICS),
            "ops/more.md": manual([(f"Extra {h}", t) for h, t in EN_TOPICS]),
            "设备/手册.md": manual(ZH_TOPICS),
        },
    )
    (folder / "empty.txt").write_bytes(b"")
    (folder / "ops" / "logo.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    return folder


WRITER_MODELS = """[judges.writer]
backend = "writer"
[judges.writer.thresholds]
faithfulness = 0.56
[embedders.fake]
backend = "writer-embedder"
"""


@pytest.fixture
def judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[WriterJudge]]:
    """Every real judge the command loads (behind the cache, as the real command does):
    a models.toml whose judge and embedder are cacheable stand-ins."""
    judge, embedder = CachedStandIn(WriterJudge), CachedStandIn(FakeEmbedder)
    register_judge_backend("writer", judge)
    register_embedder_backend("writer-embedder", embedder)
    models = tmp_path / "writer.toml"
    models.write_text(WRITER_MODELS, encoding="utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    yield judge.loaded
    unregister_backend("writer")
    unregister_backend("writer-embedder")


def generate(*args: str) -> Any:
    return CliRunner().invoke(main, ["generate", *args, "--no-progress"])


def test_generate_writes_a_dataset_and_says_what_it_did(
    docs: Path, tmp_path: Path, judges: list[WriterJudge], opened_connections: Connections
) -> None:
    out = tmp_path / "testset.jsonl"
    result = generate(str(docs), "--size", "10", "--output", str(out))
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"Warning: skipped {docs.as_posix()}/empty.txt: empty (no text)\n"
        f"Warning: skipped {docs.as_posix()}/ops/logo.txt: binary data, not text\n"
        f"Read 3 documents (2 skipped): {len(read_corpus([docs]).chunks)} chunks\n"
    )
    lines = result.stdout.splitlines()
    assert lines[0] == (f"Wrote 10 questions to {out}: 6 single_fact, 2 two_chunk, 2 unanswerable")
    assert lines[1] == "Rejected 0 candidates"
    assert lines[2].startswith("judge: ") and lines[2].endswith(" s")
    rows = json_lines(out)
    assert len(rows) == 10 and all(list(r) == FIELDS for r in rows)
    assert {r["kind"] for r in rows} == {"single_fact", "two_chunk", "unanswerable"}
    assert {r["category"] for r in rows} <= {"ops", "设备"}
    assert all(r["answer"] == "" and r["contexts"] == [] for r in rows)
    assert len({r["sample_id"] for r in rows}) == 10
    assert len(opened_connections) == 1 and opened_connections.still_open() == []


@pytest.mark.both_stores
def test_a_second_run_makes_no_judge_call_and_writes_the_same_file(
    docs: Path, tmp_path: Path, judges: list[WriterJudge]
) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    result = generate(str(docs), "-n", "8", "-o", str(first))
    assert result.exit_code == 0, result.output
    calls = judges[0].usage.judge_calls
    asked = re.search(r"judge: (\d+) calls \((\d+) from cache\)", result.stdout)
    assert asked is not None and int(asked.group(1)) == calls
    result = generate(str(docs), "-n", "8", "-o", str(second))
    assert result.exit_code == 0, result.output
    assert len(judges) == 1 and judges[0].usage.judge_calls == calls  # not even loaded again
    assert f"judge: 0 calls ({calls + int(asked.group(2))} from cache)" in result.stdout
    assert second.read_bytes() == first.read_bytes()


def test_verbose_lists_each_rejected_candidate(
    docs: Path, tmp_path: Path, stand_ins: StandIns
) -> None:
    copying = WriterJudge(rewrite=lambda r: {**r, "question": r["fact"].rstrip("。.") + "?"})
    stand_ins.use(copying, FakeEmbedder())
    out = tmp_path / "t.jsonl"
    result = generate(str(docs / "ops"), "-n", "2", "--mix", "single_fact=1", "-o", str(out), "-v")
    assert result.exit_code == 2
    rejected = [line for line in result.stderr.splitlines() if line.startswith("  rejected")]
    assert len(rejected) == 6  # 3 candidates per question wanted
    assert rejected[0].startswith(
        f"  rejected single_fact (copies_chunk) from {docs.as_posix()}/ops/"
    )
    assert rejected[0].endswith("% of it copied from the chunk")
    assert result.stderr.endswith(
        "Error: no question passed the checks (6 candidates rejected: 6 copies_chunk); run with "
        "--verbose to see them\n"
    )
    assert not out.exists()


class ChineseAlike(FakeEmbedder):
    """Puts every Chinese text near one point, as the English-only default embedder does."""

    def embed(self, texts: Any) -> Any:
        vectors = super().embed(texts)
        for i, text in enumerate(texts):
            if detect_language(text) == "zh":
                vectors[i] = vectors[i] * 0.1 + 1.0 / np.sqrt(vectors.shape[1])
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_the_summary_counts_rejections_and_says_which_kind_fell_short(
    docs: Path, tmp_path: Path, stand_ins: StandIns
) -> None:
    # every single_fact question is the same English one: 1 kept, the rest rejected
    same = WriterJudge(rewrite=lambda r: {**r, "question": "Which port?"} if "fact" in r else r)
    stand_ins.use(same, ChineseAlike())
    out = tmp_path / "t.jsonl"
    args = [str(docs), "-n", "3", "--mix", "single_fact=2,unanswerable=1", "-o", str(out)]
    for verbose in (False, True):
        result = generate(*args, *(["-v"] if verbose else []))
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        hint = "" if verbose else " (--verbose lists them)"
        assert lines[:3] == [
            f"Wrote 2 questions to {out}: 1 single_fact, 1 unanswerable",
            "Warning: only 1 of 2 single_fact questions passed the checks (more or longer "
            "documents give more candidates)",
            f"Rejected 5 candidates: 3 duplicate, 2 wrong_language{hint}",
        ]
        assert re.fullmatch(
            r"judge: 9 calls \(0 from cache\), 411 prompt tokens evaluated, 0 generated; "
            r"\d+\.\d s",
            lines[3],
        )
        assert len(lines) == 4
        listed = [line for line in result.stderr.splitlines() if line.startswith("  rejected")]
        assert len(listed) == (5 if verbose else 0)
        assert result.stderr.endswith(
            "Warning: the embedder fake-embedder finds the 'zh' chunks alike (mean similarity "
            "0.99): spreading the chunks, pairing related ones and finding the chunks nearest "
            "an unanswerable question work less well; a multilingual embedder (--embedder) does "
            "better\n"
        )
    assert listed[0] == (
        f"  rejected single_fact (wrong_language) from {docs.as_posix()}/设备/手册.md:1: "
        "'Which port?' - the chunk is in 'zh'"
    )


def test_usage_errors_exit_2_before_any_model_loads(
    docs: Path, tmp_path: Path, stand_ins: StandIns
) -> None:
    stand_ins.forbid("no model may load")
    doc = docs / "ops" / "manual.md"
    cases = [
        ([str(tmp_path / "none")], f"Error: {tmp_path / 'none'}: no such file or folder\n"),
        ([str(docs), "--mix", "tricky"], "Error: --mix 'tricky': give KIND=WEIGHT pairs, e.g. "
         "single_fact=0.6,two_chunk=0.2,unanswerable=0.2\n"),
        ([str(docs), "--mix", "multi=1"], "Error: unknown question kind 'multi' (known: "
         "single_fact, two_chunk, unanswerable)\n"),
        ([str(docs / "empty.txt")], f"Warning: skipped {docs.as_posix()}/empty.txt: empty (no "
         f"text)\nError: no readable document (.txt, .md, .html, .pdf) in {docs / 'empty.txt'}\n"),
    ]  # fmt: skip
    for args, message in cases:
        result = generate(*args, "-o", str(tmp_path / "out.jsonl"))
        assert result.exit_code == 2, result.output
        assert result.stderr == message
    result = generate(str(doc), "-o", str(doc))
    assert result.exit_code == 2
    assert result.stderr.endswith(
        f"Error: --output {doc}: is the same file as one of the documents, {doc}; refusing to "
        "overwrite it\n"
    )
    result = generate(str(docs), "-o", str(tmp_path / "no" / "t.jsonl"))
    missing = tmp_path / "no"
    assert (
        result.stderr == f"Error: --output {missing / 't.jsonl'}: folder {missing} does not exist\n"
    )


def test_the_output_is_never_an_input_and_an_overwrite_is_said(
    docs: Path, tmp_path: Path, stand_ins: StandIns, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_ins.forbid("no model may load")
    db = tmp_path / "runs.db"
    db.write_bytes(b"")
    logo = docs / "ops" / "logo.txt"  # skipped as binary, but still the user's file
    link = tmp_path / "link.jsonl"
    link.symlink_to(db)
    cases = [
        (["-o", str(db), "--db", str(db)], f"--output {db}: is the same file as the run "
         f"database (--db), {db}; refusing to overwrite it"),
        (["-o", str(link), "--db", str(db)], f"--output {link}: is the same file as the run "
         f"database (--db), {db}; refusing to overwrite it"),
        (["-o", str(stand_ins.models)], f"--output {stand_ins.models}: is the same file as "
         f"the models file, {stand_ins.models}; refusing to overwrite it"),
        (["-o", str(logo)], f"--output {logo}: is the same file as one of the documents, "
         f"{logo.as_posix()}; refusing to overwrite it"),
        (["-o", str(docs)], f"--output {docs}: is a directory"),
    ]  # fmt: skip
    for args, message in cases:
        result = generate(str(docs), *args)
        assert result.exit_code == 2, result.output
        assert result.stderr.endswith(f"Error: {message}\n"), result.stderr
    assert db.read_bytes() == b"" and logo.read_bytes().startswith(b"\x89PNG")


def test_an_existing_output_is_replaced_with_a_warning_and_a_stream_written_to(
    docs: Path, tmp_path: Path, judges: list[WriterJudge]
) -> None:
    out = tmp_path / "t.jsonl"
    out.write_text("old\n", encoding="utf-8")
    result = generate(str(docs), "-n", "2", "-o", str(out))
    assert result.exit_code == 0, result.output
    said = f"Warning: --output {out} exists; it will be overwritten\nRead 3 documents (2 skipped)"
    assert said in result.stderr
    written = out.read_text(encoding="utf-8")
    assert len(written.splitlines()) == 2
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[str] = []
    reader = threading.Thread(
        target=lambda: read.append(fifo.read_text(encoding="utf-8")), daemon=True
    )
    reader.start()
    result = generate(str(docs), "-n", "2", "-o", str(fifo))
    reader.join(timeout=10)
    assert result.exit_code == 0, result.output
    assert read == [written] and stat.S_ISFIFO(fifo.stat().st_mode)  # streamed, not replaced


def test_text_from_the_documents_is_printed_as_text(tmp_path: Path, stand_ins: StandIns) -> None:
    stand_ins.forbid("no model may load")
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "title\x1b]0;owned\x07.txt").write_bytes(b"")
    result = generate(str(folder), "-o", str(tmp_path / "t.jsonl"))
    assert result.exit_code == 2
    assert result.stderr == (
        f"Warning: skipped {folder.as_posix()}/title\\x1b]0;owned\\x07.txt: empty (no text)\n"
        f"Error: no readable document (.txt, .md, .html, .pdf) in {folder}\n"
    )


def test_evaluate_refuses_an_unfilled_test_set_and_scores_a_filled_one(
    docs: Path, tmp_path: Path, judges: list[WriterJudge], stand_ins: StandIns
) -> None:
    testset = tmp_path / "testset.jsonl"
    assert generate(str(docs), "-n", "5", "-o", str(testset)).exit_code == 0
    stand_ins.use(HashJudge(), FakeEmbedder())  # evaluate's judge and embedder
    result = CliRunner().invoke(main, ["evaluate", str(testset)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {testset}: no row has an answer or contexts, so there is nothing to score. It "
        f"is a test set from `localeval generate`: fill it first, with localeval answer {testset} "
        "--app module:function --output filled.jsonl\n"
    )

    filled = tmp_path / "filled.jsonl"
    rows = json_lines(testset)
    for row in rows:
        row["answer"], row["contexts"] = row["reference_answer"], row["reference_contexts"] or ["x"]
    filled.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        main, ["evaluate", str(filled), "--output", str(out), "--no-progress"]
    )
    assert result.exit_code in (0, 1), result.output
    assert "unknown field" not in result.stderr  # kind, source, reference_contexts are expected
    assert result.stderr.startswith(f"Loaded 5 samples from {filled}; metrics: ")
    samples = json.loads(out.read_text(encoding="utf-8"))["samples"]
    assert [s["sample_id"] for s in samples] == [r["sample_id"] for r in rows]
