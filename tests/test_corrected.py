"""A run's metrics corrected by the team's labels: people's value per sample
(localeval.results.person_values), the corrected summary in results.json and every view of it,
and only labels of samples picked at random counting for it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from corrected_runs import (
    ENOUGH,
    METRICS,
    RUN_SIZE,
    by_hand,
    labelled_run,
    reached,
    stored_labels,
    summary_of,
)
from review_runs import demo_copies, evaluate, run_cli
from standins import StandIns

from localeval.labels.review_items import load_review_run
from localeval.labels.store import LabelStore
from localeval.prediction_powered import MIN_LABELLED, corrected_mean
from localeval.results.person_values import CHOSEN, PERSON_VALUE, RANDOM, estimate_order


@pytest.mark.both_stores
@pytest.mark.parametrize("metric", ["faithfulness", "context_precision"])
def test_results_json_holds_the_corrected_mean_of_the_formula(
    stand_ins: StandIns, tmp_path: Path, metric: str
) -> None:
    review = labelled_run(stand_ins, tmp_path, ENOUGH)
    out = tmp_path / "results.json"
    assert run_cli("runs", "show", "latest", "-o", out).exit_code == 0
    entry = json.loads(out.read_text("utf-8"))["summary"][metric]
    expected = corrected_mean(*by_hand(review, metric, ENOUGH))
    assert entry["labels_needed"] == 0
    found = entry["corrected"]
    assert found["n_labelled"] == ENOUGH
    assert found["mean"] == pytest.approx(round(expected.mean, 4))
    assert found["ci95"] == pytest.approx([round(v, 4) for v in expected.ci95])
    assert found["judge_mean"] == pytest.approx(entry["mean"], abs=1e-3)
    assert found["labels_only"]["mean"] == pytest.approx(
        round(float(np.mean(by_hand(review, metric, ENOUGH)[2])), 4)
    )


def test_too_few_labels_say_how_many_more(stand_ins: StandIns, tmp_path: Path) -> None:
    labelled_run(stand_ins, tmp_path, 5, n_samples=RUN_SIZE)
    out = tmp_path / "results.json"
    result = run_cli("runs", "show", "latest", "-o", out)
    assert result.exit_code == 0, result.output
    entry = json.loads(out.read_text("utf-8"))["summary"]["faithfulness"]
    assert entry["corrected"] is None
    assert entry["labels_needed"] == MIN_LABELLED - 5
    assert f"label {MIN_LABELLED - 5} more samples" in " ".join(result.output.split())
    # a run smaller than the minimum can never have one: it says so, not "label more"
    labelled_run(stand_ins, tmp_path, 5, n_samples=12)
    small = " ".join(run_cli("runs", "show", "latest").output.split())
    assert f"needs {MIN_LABELLED} labelled samples; this run has only 12 samples" in small


def test_labels_picked_otherwise_count_only_where_the_estimate_order_reaches(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    review = labelled_run(stand_ins, tmp_path, ENOUGH, selection=CHOSEN)
    out = tmp_path / "results.json"
    assert run_cli("runs", "show", "latest", "-o", out).exit_code == 0
    entry = json.loads(out.read_text("utf-8"))["summary"]["faithfulness"]
    counted = reached(review, ENOUGH)
    # the file's first ENOUGH are not the order's first MIN_LABELLED
    assert counted < MIN_LABELLED
    assert entry["corrected"] is None
    assert entry["labels_needed"] == MIN_LABELLED - counted
    assert entry["labels_not_counted"]["chosen"] == ENOUGH - counted


def test_every_metric_made_of_verdicts_has_a_person_value() -> None:
    from localeval.metrics import spec

    made_of_verdicts = {
        m
        for m in ("faithfulness", "context_recall", "context_precision", "answer_relevancy")
        if (found := spec(m)) is not None and found.verdict_kind
    }
    assert made_of_verdicts <= set(PERSON_VALUE)


@pytest.mark.both_stores
def test_labels_carry_over_to_a_later_run_of_the_same_samples(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    first = labelled_run(stand_ins, tmp_path, ENOUGH, n_samples=RUN_SIZE)
    data = tmp_path / f"demo-{RUN_SIZE}.jsonl"
    # the same samples again: a new run, whose gate reads the corrected mean at once
    again = run_cli("evaluate", data, *METRICS, "--no-progress", "--no-resume")
    assert again.exit_code in (0, 1), again.output
    assert "corrected by people's labels, 95% CI" in again.output
    entry = summary_of(tmp_path)
    assert entry["corrected"]["n_labelled"] == ENOUGH
    # one answer gains a statement, another sample's contexts change
    rows = [json.loads(line) for line in data.read_text("utf-8").splitlines()]
    rows[0]["answer"] += " It also comes with a free coffee mug."
    rows[1]["contexts"] = ["Nothing here is about the question at all."]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    evaluate(stand_ins, data, *METRICS)
    changed = summary_of(tmp_path)
    assert changed["corrected"]["n_labelled"] == ENOUGH - 2
    # the changed answer's old statements keep their labels; only the new one is missing
    assert changed["labels_not_counted"]["incomplete"] == 1
    assert first.run.id not in run_cli("runs", "show", "latest").output.split("run:")[1][:40]


def test_labels_of_other_samples_carry_over_but_do_not_count_as_random(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    labelled_run(stand_ins, tmp_path, ENOUGH, n_samples=RUN_SIZE)
    bigger = demo_copies(tmp_path, RUN_SIZE + 10)  # the first RUN_SIZE ids are the same samples
    evaluate(stand_ins, bigger, *METRICS)
    entry = summary_of(tmp_path)
    counted = reached(load_review_run("latest"), ENOUGH)
    assert entry["corrected"] is None
    assert entry["labels_not_counted"]["chosen"] == ENOUGH - counted


@pytest.mark.both_stores
def test_an_import_counts_for_the_estimate_only_when_said_random(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    labelled_run(stand_ins, tmp_path, MIN_LABELLED + 2, n_samples=RUN_SIZE)
    exported = tmp_path / "labels.jsonl"
    assert run_cli("labels", "export", "latest", "-o", exported).exit_code == 0
    written = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    assert {row["selection"] for row in written} == {RANDOM}  # the export says the mode
    plain = [{k: v for k, v in row.items() if k != "selection"} for row in written]
    exported.write_text("".join(json.dumps(r) + "\n" for r in plain), "utf-8")
    # a run of more samples: the earlier run's labels carry over, but not as random ones
    evaluate(stand_ins, demo_copies(tmp_path, RUN_SIZE + 1), *METRICS)
    assert summary_of(tmp_path)["corrected"] is None
    result = run_cli("labels", "import", exported, "--run", "latest")
    assert result.exit_code == 0, result.output
    assert "not counted for the mean corrected by labels" in result.output
    again = load_review_run("latest")
    assert {x.selection for x in stored_labels(again)} == {CHOSEN}
    result = run_cli("labels", "import", exported, "--run", "latest", "--random-sample")
    assert result.exit_code == 0, result.output
    assert {x.selection for x in stored_labels(again)} == {RANDOM}
    assert summary_of(tmp_path)["corrected"]["n_labelled"] == MIN_LABELLED + 2


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"sample_id": "nowhere", "metric": "faithfulness", "verdict": 0, "label": 1}, "no sample"),
        (
            {"sample_id": "billing-1-0", "metric": "faithfulness", "verdict": 0, "label": 1.5},
            "[0, 1]",
        ),
        (
            {"sample_id": "billing-1-0", "metric": "faithfulness", "verdict": 0, "label": -0.2},
            "[0, 1]",
        ),
        (
            {"sample_id": "billing-1-0", "metric": "faithfulness", "label": 1, "selection": "x"},
            "random or chosen",
        ),
    ],
)
def test_bad_label_files_store_nothing(
    stand_ins: StandIns, tmp_path: Path, row: dict, says: str
) -> None:
    review = labelled_run(stand_ins, tmp_path, 0, n_samples=3)
    good = {"sample_id": "billing-1-0", "metric": "faithfulness", "verdict": 0, "label": 1}
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", "utf-8")
    result = run_cli("labels", "import", path, "--run", "latest")
    assert result.exit_code == 2
    assert says in result.output and "line 2" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert stored_labels(review) == []


def test_two_reviewers_who_disagree_count_as_their_mean(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    review = labelled_run(stand_ins, tmp_path, MIN_LABELLED, n_samples=MIN_LABELLED + 4)
    sample = review.samples[0]["sample_id"]
    verdicts = [v for v in review.verdicts[sample] if v.metric == "faithfulness"]
    mine = stored_labels(review)
    first = next(
        x
        for x in mine
        if (x.sample_id, x.metric, x.verdict) == (sample, "faithfulness", verdicts[0].index)
    )
    other = replace(first, reviewer="bo", label=1 - first.label, mark=None, id=None)
    store = LabelStore.open(review.db)
    try:
        store.add(review.run.id, [other])
    finally:
        store.close()
    entry = summary_of(tmp_path)
    assert entry["labels_disagreeing"] == 1
    # people's value of that sample: the first verdict counts as the two reviewers' mean
    judge_all, judge_lab, people = by_hand(review, "faithfulness", MIN_LABELLED)
    people[0] += (0.5 - other.label) / len(verdicts)  # by_hand read bo's, the latest
    expected = corrected_mean(judge_all, judge_lab, people)
    assert entry["corrected"]["mean"] == pytest.approx(round(expected.mean, 4))
    shown = " ".join(run_cli("runs", "show", "latest").output.split())
    assert "reviewers disagree on 1 verdict (their mean counts)" in shown


def test_a_metric_the_embedder_scores_has_no_corrected_mean(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    data = demo_copies(tmp_path, 4)
    evaluate(stand_ins, data, "-m", "faithfulness", "-m", "context_precision")
    summary = json.loads(
        (lambda out: (run_cli("runs", "show", "latest", "-o", out), out)[1])(
            tmp_path / "r.json"
        ).read_text("utf-8")
    )["summary"]
    assert "labels_needed" in summary["faithfulness"]
    # English chunks are the embedder's: no verdicts to label, so no line to chase
    assert "labels_needed" not in summary["context_precision"]


def test_the_worked_examples_labels_match_every_demo_statement(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """docs/corrected-example.md imports examples/demo-labels.jsonl into a demo run."""
    from review_runs import DEMO, demo_copy

    evaluate(stand_ins, demo_copy(tmp_path), "-m", "faithfulness")
    labels = DEMO.parent / "demo-labels.jsonl"
    result = run_cli("labels", "import", labels, "--run", "latest", "--random-sample")
    assert result.exit_code == 0, result.output
    n = len(labels.read_text("utf-8").splitlines())
    assert f"Imported {n} labels" in result.output and "0 matched no verdict" in result.output
    review = load_review_run("latest")
    statements = [v for s in review.verdicts.values() for v in s if v.metric == "faithfulness"]
    assert len(statements) == n


def test_a_sample_skipped_in_the_estimate_order_ends_what_counts(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """Labelled in the estimate order, the samples count up to the first one skipped: a
    reviewer who passes over a hard sample cannot bias the estimate."""
    evaluate(stand_ins, demo_copies(tmp_path, RUN_SIZE), *METRICS)
    review = load_review_run("latest")
    order = review.estimate_order()
    assert order == estimate_order(s["sample_id"] for s in review.samples)
    skipped = MIN_LABELLED + 2
    chosen = order[:skipped] + order[skipped + 1 : skipped + 4]
    made = []
    for sample_id in chosen:
        for v in review.verdicts[sample_id]:
            made.append(review.label_for(sample_id, v.metric, v.index, "right", "ann"))
    store = LabelStore.open(review.db)
    try:
        store.add(review.run.id, made)
    finally:
        store.close()
    entry = summary_of(tmp_path)
    assert entry["corrected"]["n_labelled"] == skipped
    assert entry["labels_not_counted"]["chosen"] == len(chosen) - skipped
    exported = tmp_path / "labels.jsonl"
    assert run_cli("labels", "export", "latest", "-o", exported).exit_code == 0
    rows = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    counted = {r["sample_id"] for r in rows if r["selection"] == RANDOM}
    assert counted == set(order[:skipped])  # the export says which count
