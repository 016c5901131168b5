"""The rubric and pairwise judges with the real default judge on a few demo rows (slow).

These need the files scripts/setup.sh provisions. Assertions are about what the judge
must get right on clear-cut cases, not about exact numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.cli import main
from localeval.config import load_models_config
from localeval.data.samples import Sample, load_samples
from localeval.metrics import Tools, build_metric
from localeval.metrics.rubric import Rubric
from localeval.pairwise.judge import compare_pair
from localeval.tools import load_tools

pytestmark = pytest.mark.real_models

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"
WRONG_PRICE = "The Team plan is free for everyone and has no storage limit."


@pytest.fixture(scope="module")
def tools() -> Tools:
    return load_tools(load_models_config(), [build_metric("rubric")])


@pytest.fixture(scope="module")
def demo() -> dict[str, Sample]:
    return {s.sample_id: s for s in load_samples(DEMO)}


def test_rubric_scores_a_right_answer_above_a_wrong_one(
    tools: Tools, demo: dict[str, Sample]
) -> None:
    right = demo["billing-1"]
    wrong = Sample(right.sample_id, right.question, right.contexts, WRONG_PRICE)
    good = Rubric().score(right, tools)
    bad = Rubric().score(wrong, tools)
    assert good.score is not None and bad.score is not None
    assert good.score > bad.score
    for result in (good, bad):
        assert set(result.details["criteria"]) == {"accuracy", "completeness", "clarity"}
        for entry in result.details["criteria"].values():
            assert 0.0 <= entry["score"] <= 10.0
            assert sum(entry["distribution"]) == pytest.approx(1.0, abs=1e-3)
        assert 0 < len(result.details["feedback"]) <= 200


def test_rubric_on_a_chinese_sample(tools: Tools, demo: dict[str, Sample]) -> None:
    result = Rubric().score(demo["zh-billing-1"], tools)
    assert result.score is not None and 0.0 <= result.score <= 1.0
    assert result.details["feedback"]


def test_pairwise_prefers_the_supported_answer_in_either_position(
    tools: Tools, demo: dict[str, Sample]
) -> None:
    sample = demo["billing-1"]
    assert sample.answer is not None
    args = (sample.question, sample.contexts, None)
    forward = compare_pair(*args, WRONG_PRICE, sample.answer, tools)
    backward = compare_pair(*args, sample.answer, WRONG_PRICE, tools)
    assert forward.winner == "B" and backward.winner == "A"
    assert forward.evidence_b.measure == "faithfulness"
    assert forward.evidence_b.value > forward.evidence_a.value


def test_cli_compare_answers_on_two_rows(tmp_path: Path, demo: dict[str, Sample]) -> None:
    rows = []
    for sample_id, wrong in (
        ("billing-1", WRONG_PRICE),
        ("product-1", "There is no limit: files of any size can be uploaded."),
    ):
        sample = demo[sample_id]
        rows.append(
            {
                "id": sample_id,
                "question": sample.question,
                "contexts": sample.contexts,
                "answer_a": wrong,
                "answer_b": sample.answer,
                "label": 1,
            }
        )
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "verdicts.json"
    result = CliRunner().invoke(
        main, ["compare-answers", str(data), "-o", str(out), "--no-progress", "--fail-if-b-worse"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["summary"]["n"] == 2
    assert all(row["winner"] in ("A", "B", "tie") for row in report["rows"])
    assert report["run"]["usage"]["judge_calls"] > 0
