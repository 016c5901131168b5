"""Comparing runs: verdicts read from the paired interval, the regression gate, warnings,
and the evidence for samples that moved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from localeval.errors import UsageError
from localeval.results.diff import (
    BETTER,
    NO_CHANGE,
    NOT_COMPARED,
    WORSE,
    comparability_warnings,
    compare_metric,
    compare_runs,
    explain_change,
)
from localeval.results.scores import RunScores, results_file_scores
from localeval.results.summary import ScoreColumns

RNG = np.random.default_rng(7)
BASE = np.clip(RNG.normal(0.8, 0.1, 40), 0, 1)


def test_identical_scores_are_no_change_with_a_zero_interval() -> None:
    change = compare_metric("faithfulness", BASE, BASE.copy())
    assert (change.verdict, change.ci95, change.change, change.n_paired) == (
        NO_CHANGE,
        (0.0, 0.0),
        0.0,
        40,
    )
    assert not change.worse_than(0.02)


def test_a_real_drop_is_worse_and_fails_the_gate() -> None:
    new = BASE - 0.1 + RNG.normal(0, 0.03, 40)
    change = compare_metric("faithfulness", BASE, new)
    assert change.verdict == WORSE and change.ci95 is not None and change.ci95[1] < 0
    assert change.change == pytest.approx(float(np.mean(new - BASE)))
    assert change.worse_than(0.02) and not change.worse_than(0.5)
    # the same scores always give the same interval
    assert compare_metric("faithfulness", BASE, new).ci95 == change.ci95


def test_a_drop_within_the_tolerance_is_worse_but_passes_the_gate() -> None:
    change = compare_metric("faithfulness", BASE, BASE - 0.01)
    assert change.verdict == WORSE and not change.worse_than(0.02)


def test_noise_is_no_detectable_change_and_gains_are_better() -> None:
    noise = np.where(np.arange(40) % 2 == 0, 0.05, -0.05)
    assert compare_metric("m", BASE, BASE + noise).verdict == NO_CHANGE
    assert compare_metric("m", BASE, BASE + 0.05).verdict == BETTER
    # one sample of forty dropping is no evidence of a change in the system
    one = BASE.copy()
    one[3] -= 0.5
    assert compare_metric("m", BASE, one).verdict == NO_CHANGE


def test_undefined_scores_are_left_out_of_the_pairs() -> None:
    base = np.array([0.5, np.nan, 0.7, 0.9])
    new = np.array([0.5, 0.4, np.nan, 0.9])
    change = compare_metric("m", base, new)
    assert change.n_paired == 2
    assert change.base_mean == pytest.approx(0.7) and change.new_mean == pytest.approx(0.6)
    assert compare_metric("m", np.array([np.nan]), np.array([0.3])).verdict == NOT_COMPARED
    single = compare_metric("m", np.array([0.9]), np.array([0.1]))
    assert single.ci95 is None and single.verdict == NO_CHANGE


def side(
    label: str, run: dict[str, Any], scores: dict[str, list[float]], **extra: Any
) -> RunScores:
    ids = extra.get("ids") or [f"s{i}" for i in range(len(next(iter(scores.values()))))]
    details = extra.get("details", {})
    columns = ScoreColumns(
        ids,
        extra.get("categories") or [None] * len(ids),
        {m: np.asarray(v, dtype=float) for m, v in scores.items()},
    )
    return RunScores(label, run, columns, lambda s, m: details.get((s, m)))


RUN = {
    "judge": {"name": "qwen", "sha256": "a" * 64},
    "embedder": {"name": "minilm", "sha256": "b" * 64},
    "prompt_version": "rag-1",
    "dataset_sha256": "c" * 64,
    "metric_settings": {"answer_relevancy": {"n_questions": 3}},
}


def test_prompt_versions_differ_only_between_runs_that_both_asked_a_judge() -> None:
    bleu = {"judge": None, "prompt_version": None, "metrics": ["bleu"]}
    # an older run of BLEU alone recorded the default set's name, which it never asked
    older_bleu = {**bleu, "prompt_version": "rag-3"}
    assert comparability_warnings(older_bleu, bleu, ["bleu"]) == []
    judged = {**RUN, "prompt_version": "rag-5"}
    assert comparability_warnings(bleu, judged, ["bleu"]) == [
        f"the runs used different judges (none vs qwen ({'a' * 12})): their scores are not "
        "comparable"
    ]
    assert comparability_warnings(RUN, judged, []) == [
        "the runs used different prompt versions (rag-1 vs rag-5): their scores are not comparable"
    ]


def test_warnings_when_runs_are_not_comparable() -> None:
    assert comparability_warnings(RUN, dict(RUN), ["answer_relevancy"]) == []
    other = {
        "judge": {"name": "smollm2", "sha256": "d" * 64},
        "embedder": {"name": "bge", "sha256": "e" * 64},
        "prompt_version": "rag-2",
        "dataset_sha256": "f" * 64,
        "metric_settings": {"answer_relevancy": {"n_questions": 5}},
    }
    assert comparability_warnings(RUN, other, ["answer_relevancy"]) == [
        f"the runs used different judges (qwen ({'a' * 12}) vs smollm2 ({'d' * 12})): their "
        "scores are not comparable",
        f"the runs used different embedders (minilm ({'b' * 12}) vs bge ({'e' * 12})): "
        "embedding-based scores are not comparable",
        "the runs used different prompt versions (rag-1 vs rag-2): their scores are not comparable",
        f"the runs used different datasets (sha256 {'c' * 12} vs {'f' * 12}): samples are "
        "paired by sample_id, and a changed sample is not the same test",
        "answer_relevancy ran with different settings ({'n_questions': 3} vs "
        "{'n_questions': 5}): its scores are not comparable",
    ]


def test_warning_when_the_same_judge_ran_with_other_settings() -> None:
    judge = {**RUN["judge"], "settings": {"batch_size": 512, "n_ctx": 8192, "call_protocol": 2}}
    other = {**judge, "settings": {"batch_size": 64, "n_ctx": 8192, "call_protocol": 2}}
    assert comparability_warnings({**RUN, "judge": judge}, {**RUN, "judge": other}, []) == [
        "the judge ran with different settings (batch_size 512 vs 64): llama.cpp's numbers "
        "depend on them, so small differences may come from that"
    ]
    # a run recorded before settings were kept: nothing known, nothing said
    assert comparability_warnings(RUN, {**RUN, "judge": other}, []) == []


def test_runs_are_paired_by_sample_id_with_categories_and_movers() -> None:
    base = side(
        "base",
        RUN,
        {"faithfulness": [0.9, 0.8, 0.7, 0.6], "context_recall": [1.0, 1.0, 1.0, 1.0]},
        ids=["a", "b", "c", "gone"],
        categories=["x", "x", "y", "y"],
    )
    new = side(
        "new",
        RUN,
        {"faithfulness": [0.2, 0.8, 0.75, 0.5]},
        ids=["a", "b", "c", "added"],
        categories=["x", "x", "y", "y"],
        details={("a", "faithfulness"): {"statements": ["S"], "support": [0.2]}},
    )
    comparison = compare_runs(base, new, top=2)
    assert (comparison.n_shared, comparison.n_base_only, comparison.n_new_only) == (3, 1, 1)
    assert comparison.not_compared == ["context_recall"]
    (faithfulness,) = comparison.metrics
    assert faithfulness.n_paired == 3
    assert faithfulness.change == pytest.approx((-0.7 + 0.0 + 0.05) / 3)
    assert list(comparison.by_category) == ["x", "y"]
    assert [m.sample_id for m in comparison.movers] == ["a", "c"]
    assert comparison.movers[0].evidence == ['new unsupported statement (0.20): "S"']
    with pytest.raises(UsageError) as err:
        compare_runs(base, side("other", RUN, {"faithfulness": [0.1]}, ids=["zz"]))
    assert str(err.value) == "base and other share no sample_id: nothing to compare"


def test_evidence_names_the_statement_and_chunk_that_changed() -> None:
    base = {"statements": ["A.", "B.", "C."], "support": [0.9, 0.8, 0.1]}
    new = {"statements": ["A.", "B.", "D."], "support": [0.1, 0.82, 0.95]}
    assert explain_change("faithfulness", base, new) == [
        'statement lost support: "A." (0.90 -> 0.10)',
        'new supported statement (0.95): "D."',
        'statement no longer in the answer (was unsupported, 0.10): "C."',
    ]
    chunks_before = {"judged_against": "reference_answer", "usefulness": [0.9, 0.2, 0.7]}
    chunks_after = {"judged_against": "reference_answer", "usefulness": [0.1, 0.3, 0.72]}
    for d in (chunks_before, chunks_after):
        d["verdicts"] = ["x"] * 3
    assert explain_change("context_precision", chunks_before, chunks_after) == [
        "chunk 1 became irrelevant (0.90 -> 0.10)"
    ]
    relevancy_before = {
        "noncommittal_probability": 0.1,
        "generated_questions": ["q"],
        "similarities": [0.9],
    }
    relevancy_after = {
        "noncommittal_probability": 0.9,
        "generated_questions": ["q"],
        "similarities": [0.9],
    }
    assert explain_change("answer_relevancy", relevancy_before, relevancy_after) == [
        "answer judged noncommittal (0.10 -> 0.90)"
    ]
    answered = {**relevancy_before, "answers_probability": 0.8}
    dodged = {**relevancy_before, "answers_probability": 0.3, "similarities": [0.7]}
    assert explain_change("answer_relevancy", answered, dodged) == [
        "judge's P(the answer answers the question) 0.80 -> 0.30",
        "generated questions now 0.70 similar to the question (before 0.90); least similar: "
        '"q" (0.70)',
    ]
    assert explain_change("faithfulness", base, {"undefined_reason": "no answer"}) == [
        "now undefined: no answer"
    ]
    assert explain_change("rubric", {"feedback": "good"}, {"feedback": "vague"}) == [
        'feedback: "good" -> "vague"'
    ]


def test_results_file_as_a_side(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(
        json.dumps(
            {
                "run": {**RUN, "id": "r1", "metrics": ["faithfulness"]},
                "samples": [
                    {
                        "sample_id": "q1",
                        "category": "c",
                        "scores": {"faithfulness": 0.5},
                        "details": {"faithfulness": {"statements": []}},
                    },
                    {
                        "sample_id": 2,
                        "category": None,
                        "scores": {"faithfulness": None},
                        "details": {},
                    },
                ],
            }
        )
    )
    scores = results_file_scores(path)
    assert scores.columns.sample_ids == ["q1", "2"]
    assert np.isnan(scores.columns.scores["faithfulness"][1])
    assert scores.details("q1", "faithfulness") == {"statements": []}
    bad = tmp_path / "bad.json"
    bad.write_text('{"run": {}}')
    with pytest.raises(UsageError) as err:
        results_file_scores(bad)
    assert str(err.value) == f"{bad}: not a results.json file (no 'run' and 'samples')"


def test_diff_says_when_two_runs_made_their_statements_differently() -> None:
    """Issue 36: a prompt set's statement modes and the per-run --*-statements flags."""
    base, new = {**RUN, "prompt_version": "rag-6"}, {**RUN, "prompt_version": "rag-6-claims"}
    assert comparability_warnings(base, new, ["answer_correctness"]) == [
        "the runs used different prompt versions (rag-6 vs rag-6-claims; statements made "
        "differently: answer_correctness: sentences vs sentences+hard-facts; answer_correctness "
        "(reference): sentences vs sentences+hard-facts; answer_correctness (reference, zh): "
        "sentences vs claims+hard-facts): their scores are not comparable"
    ]
    # the two sets make faithfulness's statements the same way: only the versions are said
    assert comparability_warnings(base, new, ["faithfulness"]) == [
        "the runs used different prompt versions (rag-6 vs rag-6-claims): their scores are not "
        "comparable"
    ]
    flagged = {**base, "metric_settings": {"faithfulness": {"statements": "claims"}}}
    assert comparability_warnings(
        {**base, "metric_settings": {"faithfulness": {}}}, flagged, ["faithfulness"]
    ) == [
        "faithfulness ran with different settings ({} vs {'statements': 'claims'}): its scores "
        "are not comparable"
    ]
