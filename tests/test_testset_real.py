"""`localeval generate` with real models on a handful of chunks (slow: seconds a chunk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval.config import load_models_config
from localeval.metrics import Tools
from localeval.testset.generation import generate_tools
from localeval.testset.questions import (
    GenerateOptions,
    GenerateResult,
    generate_testset,
    read_corpus,
)
from localeval.text import detect_language

pytestmark = pytest.mark.real_models

DOCS = Path(__file__).resolve().parent.parent / "examples" / "docs"
FILES = [DOCS / "en" / "operations" / "network.md", DOCS / "zh" / "设备" / "电池与充电.md"]


def run(
    judge: str | None, db: Path, size: int, mix: dict[str, float]
) -> tuple[GenerateResult, Tools]:
    with generate_tools(load_models_config(), judge, db=db) as tools:
        corpus = read_corpus(FILES)
        result = generate_testset(corpus, tools, GenerateOptions(size=size, mix=mix))
    return result, tools


def test_plumbing_with_the_smallest_judge_and_a_free_identical_rerun(tmp_path: Path) -> None:
    mix = {"single_fact": 1, "two_chunk": 1, "unanswerable": 1}
    first, _ = run("smollm2-135m", tmp_path / "db", 3, mix)
    attempts = len(first.questions) + len(first.rejections)
    assert attempts >= 3 and first.usage.judge_calls > 0
    for question in first.questions:
        row = question.row()
        assert row["question"].strip() and row["reference_answer"].strip()
        assert detect_language(row["question"]) == question.sources[0].language
    second, tools = run("smollm2-135m", tmp_path / "db", 3, mix)
    assert second.usage.judge_calls == 0
    assert not getattr(tools.judge, "loaded", True)  # a CachedJudge that never loaded
    assert [q.row() for q in second.questions] == [q.row() for q in first.questions]


def test_the_default_judge_writes_in_each_chunks_language(tmp_path: Path) -> None:
    result, _ = run(None, tmp_path / "db", 4, {"single_fact": 1})
    reasons = result.reasons()
    assert "wrong_language" not in reasons, result.rejections
    languages = {q.sources[0].language for q in result.questions}
    assert languages <= {"en", "zh"} and result.questions
