"""Runs of the demo with the stand-in judge whose verdicts are labelled, for the tests of
the mean corrected by labels (test_corrected.py, test_corrected_views.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from review_runs import demo_copies, evaluate, run_cli
from standins import StandIns

from localeval.labels.review_items import ReviewRun, load_review_run
from localeval.labels.store import Label, LabelStore
from localeval.prediction_powered import MIN_LABELLED
from localeval.results.person_values import RANDOM, estimate_order

METRICS = (
    "-m",
    "faithfulness",
    "-m",
    "context_precision",
    "--context-precision-usefulness",
    "judge",
)
#: labelled samples a little over the minimum: enough for a corrected mean
ENOUGH = MIN_LABELLED + 5
#: a run larger than the minimum with room for unlabelled samples (its file: demo-N.jsonl)
RUN_SIZE = MIN_LABELLED + 10


def labelled_run(
    stand_ins: StandIns,
    folder: Path,
    n: int,
    selection: str = RANDOM,
    n_samples: int = MIN_LABELLED + 20,
) -> ReviewRun:
    """A run of `n_samples` demo samples with every verdict of its first `n` labelled: the
    judge right where it is sure, wrong elsewhere."""
    evaluate(stand_ins, demo_copies(folder, n_samples), *METRICS)
    review = load_review_run("latest")
    made = []
    for sample in review.samples[:n]:
        for v in review.verdicts[sample["sample_id"]]:
            mark = "right" if abs(v.raw - 0.5) > 0.2 else "wrong"
            label = review.label_for(sample["sample_id"], v.metric, v.index, mark, "ann")
            made.append(replace(label, selection=selection))
    store = LabelStore.open(review.db)
    try:
        store.add(review.run.id, made)
    finally:
        store.close()
    return review


def by_hand(review: ReviewRun, metric: str, n: int) -> tuple[list[float], list[float], list[float]]:
    """The judge's scores on every sample, and on the labelled ones with people's values
    computed here from the labels' definition (docs/reference.md), not from the module."""
    store = LabelStore.open(review.db)
    try:
        labels = {(x.sample_id, x.metric, x.verdict): x.label for x in store.current(review.run.id)}
    finally:
        store.close()
    judge_all = [s["scores"][metric] for s in review.samples]
    judge_lab, people = [], []
    for sample in review.samples[:n]:
        verdicts = [v for v in review.verdicts[sample["sample_id"]] if v.metric == metric]
        values = [labels[(sample["sample_id"], metric, v.index)] for v in verdicts]
        if metric == "faithfulness":
            person = sum(values) / len(values)
        else:  # rank-weighted precision of people's usefulness
            hits, total = 0.0, 0.0
            for k, v in enumerate(values, start=1):
                hits += v
                total += hits / k * v
            person = total / sum(values) if sum(values) else 0.0
        judge_lab.append(sample["scores"][metric])
        people.append(person)
    return judge_all, judge_lab, people


def reached(review: ReviewRun, n: int) -> int:
    """How many samples from the start of the estimate order are among the first `n` of
    the file (the complete start of the order: the only ones a non-random pick counts)."""
    ids = [s["sample_id"] for s in review.samples]
    first = set(ids[:n])
    count = 0
    for sample_id in estimate_order(ids):
        if sample_id not in first:
            break
        count += 1
    return count


def summary_of(tmp_path: Path, metric: str = "faithfulness") -> dict:
    out = tmp_path / "shown.json"
    result = run_cli("runs", "show", "latest", "-o", out)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text("utf-8"))["summary"][metric]


def stored_labels(review: ReviewRun) -> list[Label]:
    store = LabelStore.open(review.db)
    try:
        return store.current(review.run.id)
    finally:
        store.close()
