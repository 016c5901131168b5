"""Writing a test set and filling it by the user's pipeline as calls
(localeval.api.testsets): what `localeval generate` and `localeval answer` do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeEmbedder
from standins import StandIns
from testset_fakes import EN_TOPICS, WriterJudge, json_lines, manual, write_docs

import localeval
from localeval.errors import UsageError
from localeval.testset.answer import AppError, partial_path


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = write_docs(tmp_path / "docs", {"ops/manual.md": manual(EN_TOPICS)})
    (folder / "empty.txt").write_bytes(b"")
    return folder


def test_generate_testset_writes_the_questions_and_warns_of_a_skipped_document(
    docs: Path, tmp_path: Path, stand_ins: StandIns
) -> None:
    stand_ins.use(WriterJudge(), FakeEmbedder())
    out = tmp_path / "testset.jsonl"
    with pytest.warns(localeval.LocalevalWarning, match="empty.txt: empty"):
        made = localeval.generate_testset(docs, out, size=4, mix={"single_fact": 1}, progress=False)
    assert [q.kind for q in made.questions] == ["single_fact"] * 4
    assert made.wanted == {"single_fact": 4, "two_chunk": 0, "unanswerable": 0}
    assert made.usage.judge_calls > 0 and made.rejections == []
    rows = json_lines(out)
    assert [r["question"] for r in rows] == [q.question for q in made.questions]


def test_a_generation_is_checked_before_any_model_loads(
    docs: Path, tmp_path: Path, stand_ins: StandIns
) -> None:
    stand_ins.forbid("checking must load no model")
    out = tmp_path / "t.jsonl"
    out.write_text("old\n", encoding="utf-8")
    skipped: list[str] = []
    generation = localeval.TestsetGeneration(
        [docs], out, size=3, mix="single_fact=2,unanswerable=1", on_skip=skipped.append
    )
    assert generation.target.replaces and out.read_text("utf-8") == "old\n"
    assert [Path(d.path).name for d in generation.corpus.documents] == ["manual.md"]
    assert len(skipped) == 1 and str(skipped[0]).endswith("empty.txt: empty (no text)")
    assert generation.options.mix == {"single_fact": 2.0, "unanswerable": 1.0}
    with pytest.raises(UsageError, match="unknown question kind 'long'"):
        localeval.TestsetGeneration(docs, out, mix={"long": 1})
    with pytest.raises(UsageError, match="size 0: must be 1 or more"):
        localeval.TestsetGeneration(docs, out, size=0)
    with pytest.raises(UsageError, match="max_overlap nan: must be a number from 0 to 1"):
        localeval.TestsetGeneration(docs, out, max_overlap=float("nan"))
    with pytest.raises(UsageError, match="chunk_tokens 8: must be 32 or more"):
        localeval.TestsetGeneration(docs, out, chunk_tokens=8)
    with pytest.raises(UsageError, match="one of the documents"):
        localeval.TestsetGeneration(docs, docs / "ops" / "manual.md", on_skip=skipped.append)


ROWS = [
    {"sample_id": f"q{n}", "question": f"Question {n}?", "answer": "", "contexts": []}
    for n in range(1, 4)
]

#: the question the pipeline fails on (None: none)
FAIL_ON: list[str] = []


def pipeline(question: str) -> dict[str, Any]:
    if question in FAIL_ON:
        raise ValueError("the index is not loaded")
    return {"answer": f"It is {question.lower()}", "contexts": [f"ctx for {question}"]}


@pytest.fixture
def testset(tmp_path: Path) -> Path:
    path = tmp_path / "testset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_answer_testset_fills_each_question_with_a_function(testset: Path, tmp_path: Path) -> None:
    out = tmp_path / "filled.jsonl"
    done = localeval.answer_testset(testset, pipeline, out, progress=False)
    assert (done.answered, done.resumed) == (3, 0)
    rows = json_lines(out)
    assert [r["answer"] for r in rows] == [
        "It is question 1?",
        "It is question 2?",
        "It is question 3?",
    ]
    assert rows[0]["contexts"] == ["ctx for Question 1?"]


def test_a_failing_pipeline_keeps_its_answers_and_the_same_call_continues(
    testset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "filled.jsonl"
    FAIL_ON.append("Question 3?")
    try:
        with pytest.raises(AppError, match="failed on sample 'q3'"):
            localeval.answer_testset(testset, pipeline, out, progress=False)
    finally:
        FAIL_ON.clear()
    assert not out.exists() and partial_path(out).exists()
    answering = localeval.TestsetAnswering(testset, pipeline, out)
    assert answering.app_spec == f"{__name__}:pipeline"
    done = answering.run()
    assert (done.answered, done.resumed) == (1, 2)
    assert not partial_path(out).exists() and len(json_lines(out)) == 3


def test_an_app_named_by_its_file_and_an_output_that_is_an_input(
    testset: Path, tmp_path: Path
) -> None:
    app = tmp_path / "app.py"
    app.write_text("def answer(q):\n    return ('A: ' + q, ['c'])\n", encoding="utf-8")
    with pytest.raises(UsageError, match="the app's file"):
        localeval.TestsetAnswering(testset, f"{app}:answer", app)
    with pytest.raises(UsageError, match="the test set"):
        localeval.TestsetAnswering(testset, pipeline, testset)
    out = tmp_path / "filled.jsonl"
    localeval.answer_testset(testset, f"{app}:answer", out, progress=False)
    assert json_lines(out)[0]["answer"] == "A: Question 1?"
