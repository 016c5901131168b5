"""Comparing two answers to each question as a call (localeval.api.pairs): what
`localeval compare-answers` prints and writes is read from these."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from standins import StandIns
from test_estimate import BACKEND, CachedFake
from test_estimate import models as counting_models
from test_pairwise import pair, prefers, write_rows

import localeval
from localeval.backends import register_judge_backend, unregister_backend
from localeval.errors import UsageError


def test_compare_answers_judges_every_pair_and_writes_the_verdicts(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    stand_ins.use(prefers("1889"))  # B holds 1889 in every row
    data = write_rows(tmp_path / "p.jsonl", [pair("p1", 1), pair("p2", -1)])
    out = tmp_path / "verdicts.json"
    outcome = localeval.compare_answers(data, output=out, progress=False)
    assert [v.winner for v in outcome.verdicts if v is not None] == ["B", "B"]
    assert outcome.summary.win_rate_b == 1.0 and not outcome.summary.b_worse()
    assert outcome.summary.agreed == 1 and outcome.usage.judge_calls > 0
    written = json.loads(out.read_text("utf-8"))
    assert written["summary"]["wins_b"] == 2 and written["run"]["dataset"] == str(data)
    assert [row["winner"] for row in written["rows"]] == ["B", "B"]


def test_other_fields_and_a_run_that_writes_only_when_asked(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    stand_ins.use(prefers("1889"))  # "old" holds 1889: A is better
    rows = [pair("p1", old="It was 1889.", new="It was 1925.")]
    data = write_rows(tmp_path / "p.jsonl", rows)
    out = tmp_path / "v.json"
    out.write_text("kept until written", encoding="utf-8")
    comparison = localeval.AnswerComparison(data, output=out, a_field="old", b_field="new")
    assert comparison.target is not None and comparison.target.replaces
    assert [row.answer_a for row in comparison.rows] == ["It was 1889."]
    outcome = comparison.run()
    assert outcome.summary.wins_a == 1 and outcome.summary.b_worse() is False
    assert out.read_text("utf-8") == "kept until written"
    comparison.write(outcome)
    assert json.loads(out.read_text("utf-8"))["summary"]["wins_a"] == 1


def test_bad_fields_are_refused_before_the_judge_loads(stand_ins: StandIns, tmp_path: Path) -> None:
    stand_ins.forbid("the judge must not be loaded")
    data = write_rows(tmp_path / "p.jsonl", [pair("p1")])
    with pytest.raises(UsageError, match="are both 'answer_a'"):
        localeval.AnswerComparison(data, b_field="answer_a")
    with pytest.raises(UsageError, match="the data file"):
        localeval.AnswerComparison(data, output=data)


@pytest.fixture
def counting_judge() -> Iterator[CachedFake]:
    registered = CachedFake()
    register_judge_backend(BACKEND, registered)
    yield registered
    unregister_backend(BACKEND)


def test_the_estimate_counts_the_judge_calls_the_run_makes(
    counting_judge: CachedFake, tmp_path: Path
) -> None:
    data = write_rows(tmp_path / "p.jsonl", [pair("p1"), pair("p2")])
    models = counting_models(tmp_path)
    estimate = localeval.AnswerComparison(data, models=models).estimate()
    outcome = localeval.compare_answers(data, models=models, progress=False)
    counted = estimate.as_dict()["estimate"]
    assert counted["n_pairs"] == 2
    assert counted["usage"]["judge_calls"] == outcome.usage.judge_calls > 0
