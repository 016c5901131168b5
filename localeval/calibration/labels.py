"""`localeval calibrate --labels RUN...`: how far the judge agrees with a team's own labels
of its verdicts and scores on the team's own data (made with `localeval review` or
brought in by `labels import`), the gates that fit it there, and maps fitted from them.

No model is loaded: the judge's verdicts are the runs' own. Each reviewer's current label
of an item is a row (two reviewers of one verdict give two rows); the figures come from
localeval.calibration.agreement (ROC AUC, the best gate and balanced accuracy there, with
bootstrap intervals), plus, per group, the balanced accuracy of the judge's own yes/no (of
a verdict) or of the run's gate (of a score), the expected calibration error of the
probabilities as the run scored them, and how often two reviewers of one item agree.
Maps are fitted as `calibrate --fit` fits them (localeval.calibration.fit), held out by
folds of samples (a sample's labels stay in one fold); here folds are enough to keep a map,
since it is meant for this data.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from localeval.calibration.agreement import Agreement, Calibration, agreements_for
from localeval.calibration.fit import KindFit, fit_maps
from localeval.calibration.rows import RowScore
from localeval.database import Location, db_words
from localeval.errors import UsageError
from localeval.labels.review_items import ReviewRun, load_review_run
from localeval.labels.store import Label, LabelStore
from localeval.metrics import spec
from localeval.stats import BinaryScores, bootstrap_cells, bootstrap_statistics
from localeval.verdict_maps import expected_calibration_error

#: the dataset column of the agreement table: the team's labels, pooled over the runs
TEAM = "team labels"
REVIEWERS = "reviewers"


@dataclass
class LabelledRow:
    """One label with what the judge made of its item."""

    row: RowScore
    #: the group its agreement is measured in: a kind of verdict, or a metric's score
    group: str
    #: the judge's yes (a verdict) or the run's gate passing (a score)
    judge_yes: bool
    is_verdict: bool
    #: the run's gate for a score's metric (None for a verdict)
    gate: float | None = None


@dataclass
class LabelCalibration:
    """The agreement of the judge with the team's labels, over one or more runs."""

    runs: list[ReviewRun]
    rows: list[LabelledRow]
    agreements: list[Agreement] = field(default_factory=list)
    #: labels whose item the run no longer has (its verdict's text changed)
    stale: int = 0

    @property
    def calibration(self) -> Calibration:
        """The figures as reports.calibration_text.format_table prints them."""
        return Calibration(self.agreements, [_renamed(r.row, TEAM, r.group) for r in self.rows])

    @property
    def judge(self) -> str | None:
        return (self.runs[0].run.info.judge or {}).get("name") if self.runs else None

    def gate_rows(self) -> Calibration:
        """Rows under their metric's name, verdicts and scores together: where a gate on
        this judge's scale separates the labels (agreement.suggested_thresholds)."""
        return Calibration([], [_renamed(r.row, TEAM, r.row.metric) for r in self.rows])

    def fit(self) -> dict[str, KindFit]:
        """A map per kind of verdict, measured on folds of samples, described by what it
        was fitted on."""
        fits = fit_maps([r.row for r in self.rows], folds_suffice=True)
        for kind, found in fits.items():
            found.map = replace(found.map, fitted_on=self.fitted_on(kind))
        return fits

    def fitted_on(self, kind: str) -> str:
        """ "24 verdicts and 5 scores labelled by your team (demo), AUC 0.91"."""
        rows = [r for r in self.rows if r.row.verdict_kind == kind]
        verdicts = sum(r.is_verdict for r in rows)
        scores = len(rows) - verdicts
        text = f"{verdicts} verdict{'s' * (verdicts != 1)}"
        if scores:
            text += f" and {scores} score{'s' * (scores != 1)}"
        datasets = ", ".join(sorted({r.row.dataset for r in rows}))
        text += f" labelled by your team ({datasets})"
        auc = next(
            (a for a in self.agreements if a.metric == kind and a.measure == "roc_auc"), None
        )
        if auc is not None and auc.value is not None:
            text += f", AUC {auc.value:.2f}"
        return text

    def as_dict(self, fits: dict[str, KindFit] | None = None) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "runs": [r.run.id for r in self.runs],
            "labels": len(self.rows),
            "stale_labels": self.stale,
            "agreements": [a.as_dict() for a in self.agreements],
            "calibration_maps": [f.as_dict() for f in (fits or {}).values()],
        }


def _renamed(row: RowScore, dataset: str, metric: str) -> RowScore:
    """The row as the table and the gates read it, under another dataset and metric (its
    label and score; a copy of the whole row takes ten times as long, which 300,000 labels
    feel)."""
    return RowScore(dataset, metric, row.label, row.pair_id, row.score)


def _dataset(review: ReviewRun) -> str:
    return Path(review.run.info.dataset or review.run.id).stem


@dataclass(frozen=True)
class _Judged:
    """What the judge made of one item: the same for every reviewer's label of it."""

    score: float
    kind: str | None
    verdicts: list[float]
    group: str
    judge_yes: bool
    is_verdict: bool
    gate: float | None = None


def _judged(review: ReviewRun, label: Label) -> _Judged | None:
    """The judge's side of the item a label marks (None: the run no longer has the item)."""
    if label.verdict is not None:
        found = review.verdict(label.sample_id, label.metric, label.verdict)
        if found is None or found.text != label.text:
            return None
        return _Judged(found.probability, found.kind, [found.raw], found.kind, found.says_yes, True)
    score = review.score(label.sample_id, label.metric)
    described = spec(label.metric)
    sample = review.sample(label.sample_id)
    details = (sample or {}).get("details", {}).get(label.metric)
    raw = described.raw_verdicts(details) if described and details is not None else None
    if score is None or described is None or not raw:
        return None
    gate = review.gate(label.metric)
    return _Judged(score, described.verdict_kind, raw, label.metric, score >= gate, False, gate)


def labelled_rows(review: ReviewRun, labels: Sequence[Label]) -> tuple[list[LabelledRow], int]:
    """Each label as a row (and how many labels match no item of the run any more)."""
    rows: list[LabelledRow] = []
    stale = 0
    dataset = _dataset(review)
    judged: dict[tuple[Any, ...], _Judged | None] = {}
    for label in labels:
        key = (*label.item, label.text)
        if key not in judged:
            judged[key] = _judged(review, label)
        found = judged[key]
        if found is None:
            stale += 1
            continue
        # a sample's labels stay in one fold when maps are fitted (in every run of it)
        row = RowScore(dataset, label.metric, label.label, (dataset, label.sample_id), found.score)
        row.verdict_kind, row.verdicts = found.kind, found.verdicts
        rows.append(LabelledRow(row, found.group, found.judge_yes, found.is_verdict, found.gate))
    return rows, stale


def group_agreements(group: str, rows: Sequence[LabelledRow]) -> list[Agreement]:
    """agreement.py's figures for one group, then the balanced accuracy of the judge's own
    yes/no (or the run's gate) and the calibration error of its probabilities, all from one
    set of resamples where every label is 0 or 1. (A row's pair_id keeps a sample's labels
    in one fold when maps are fitted; it pairs nothing here.)"""
    binary = [r for r in rows if r.row.label in (0.0, 1.0)]
    said = BinaryScores(
        [float(r.judge_yes) for r in binary], [int(r.row.label or 0) for r in binary]
    )
    gates = {r.gate for r in binary}
    name = "bal_acc@judge" if binary and binary[0].is_verdict else "bal_acc@gate"
    if len(gates) == 1 and None not in gates:
        name = f"bal_acc@{gates.pop():.2f}"

    def more(scored: BinaryScores) -> list[tuple[str, Callable[[np.ndarray | None], float | None]]]:
        return [
            (name, lambda i: said.balanced_accuracy(0.5, i)),
            ("ece", lambda i: _calibration_error(scored, i)),
        ]

    found = agreements_for(TEAM, group, [r.row for r in rows], pairs=False, more=more)
    if any(a.measure == "ece" for a in found):
        return found
    # graded labels among them: each figure of its own rows
    if binary and all(a.measure != name for a in found):
        bal_acc = partial(said.balanced_accuracy, 0.5)
        found.append(_figure(group, name, bal_acc(), bal_acc, len(binary)))
    scores = np.array([r.row.score for r in rows], dtype=float)
    labels = np.array([r.row.label for r in rows], dtype=float)
    ece = expected_calibration_error(scores, labels)
    found.append(
        _figure(
            group, "ece", ece, lambda i: expected_calibration_error(scores[i], labels[i]), len(rows)
        )
    )
    return found


def _calibration_error(scored: BinaryScores, drawn: np.ndarray | None) -> float:
    """The expected calibration error of rows labelled 0 and 1, from their counts per score
    (of the resample `drawn`)."""
    positives, negatives = scored.counts(drawn)
    held = (positives + negatives) > 0
    size = positives[held] + negatives[held]
    return expected_calibration_error(scored.levels[held], positives[held] / size, weights=size)


def _figure(
    group: str,
    measure: str,
    value: float | None,
    statistic: Callable[[np.ndarray], float | None],
    n: int,
) -> Agreement:
    (interval,) = bootstrap_statistics([statistic], n)
    return Agreement(TEAM, group, measure, value, interval, n)


def reviewer_agreement(runs: Sequence[Sequence[Label]]) -> list[Agreement]:
    """Over items two reviewers labelled (each run's labels): the share of pairs of their
    labels on the same side of 0.5, and Cohen's kappa (agreement beyond what their label
    rates alone would give). A pair is one of four kinds (either side, each), so its
    resamples are drawn as counts of each kind, however many pairs there are."""
    by_item: dict[tuple[Any, ...], dict[str, float]] = defaultdict(dict)
    for number, labels in enumerate(runs):
        for label in labels:
            by_item[(number, *label.item)][label.reviewer] = label.label
    # kinds: 2 * (first >= 0.5) + (second >= 0.5), over the pairs of an item's labels in
    # the order they were made: each label pairs with every one before it
    kinds = np.zeros(4)
    for reviewers in by_item.values():
        before = [0, 0]  # labels before this one below 0.5, at or above it
        for value in reviewers.values():
            side = int(value >= 0.5)
            kinds[side] += before[0]
            kinds[2 + side] += before[1]
            before[side] += 1
    n = int(kinds.sum())
    if not n:
        return []

    def share(counts: np.ndarray) -> float:
        return float((counts[0] + counts[3]) / counts.sum())

    def kappa(counts: np.ndarray) -> float | None:
        total = counts.sum()
        p1, p2 = (counts[2] + counts[3]) / total, (counts[1] + counts[3]) / total
        chance = p1 * p2 + (1 - p1) * (1 - p2)
        return None if chance >= 1 else float((share(counts) - chance) / (1 - chance))

    intervals = bootstrap_cells([share, kappa], kinds)
    return [
        Agreement(TEAM, REVIEWERS, "agreement", share(kinds), intervals[0], n),
        Agreement(TEAM, REVIEWERS, "cohen_kappa", kappa(kinds), intervals[1], n),
    ]


def calibrate_labels(refs: Sequence[str], db_path: Location | None = None) -> LabelCalibration:
    """The agreement figures over the labels of the runs `refs` names; UsageError when they
    hold no label."""
    runs: list[ReviewRun] = []
    rows: list[LabelledRow] = []
    per_run: list[list[Label]] = []
    stale = 0
    for ref in dict.fromkeys(refs):
        review = load_review_run(ref, db_path)
        with LabelStore.open(review.db) as store:
            labels = store.current(review.run.id)
        if not labels:
            raise UsageError(
                f"run {review.run.id} has no labels yet: `localeval review {ref}"
                f"{db_words(review.db)}` makes them, `localeval labels import FILE --run "
                f"{review.run.id}{db_words(review.db)}` brings them from a file"
            )
        found, missed = labelled_rows(review, labels)
        runs.append(review)
        rows += found
        stale += missed
        per_run.append(labels)
    judges = sorted({str((r.run.info.judge or {}).get("name")) for r in runs})
    if len(judges) > 1:
        raise UsageError(
            f"the runs were judged by different judges ({', '.join(judges)}); calibrate one "
            "judge's runs at a time"
        )
    groups: dict[str, list[LabelledRow]] = defaultdict(list)
    for row in rows:
        groups[row.group].append(row)
    # kinds of verdict first, then the metrics' scores
    order = sorted(groups, key=lambda g: (spec(g) is not None, g))
    agreements = [a for g in order for a in group_agreements(g, groups[g])]
    agreements += reviewer_agreement(per_run)
    return LabelCalibration(runs, rows, agreements, stale)
