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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from localeval.calibration.agreement import Agreement, Calibration, agreements_for
from localeval.calibration.fit import KindFit, fit_maps
from localeval.calibration.rows import RowScore
from localeval.database import Location
from localeval.errors import UsageError
from localeval.metrics import spec
from localeval.runs.labels import Label, LabelStore
from localeval.runs.review_items import ReviewRun, load_review_run
from localeval.stats import balanced_accuracy, bootstrap_statistic
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
        """The figures as agreement.format_table prints them."""
        return Calibration(
            self.agreements, [replace(r.row, dataset=TEAM, metric=r.group) for r in self.rows]
        )

    @property
    def judge(self) -> str | None:
        return (self.runs[0].run.info.judge or {}).get("name") if self.runs else None

    def gate_rows(self) -> Calibration:
        """Rows under their metric's name, verdicts and scores together: where a gate on
        this judge's scale separates the labels (agreement.suggested_thresholds)."""
        return Calibration([], [replace(r.row, dataset=TEAM) for r in self.rows])

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


def _dataset(review: ReviewRun) -> str:
    return Path(review.run.info.dataset or review.run.id).stem


def labelled_rows(review: ReviewRun, labels: Sequence[Label]) -> tuple[list[LabelledRow], int]:
    """Each label as a row (and how many labels match no item of the run any more)."""
    rows: list[LabelledRow] = []
    stale = 0
    dataset = _dataset(review)
    for label in labels:
        # a sample's labels stay in one fold when maps are fitted (in every run of it)
        pair = (dataset, label.sample_id)
        if label.verdict is not None:
            found = review.verdict(label.sample_id, label.metric, label.verdict)
            if found is None or found.text != label.text:
                stale += 1
                continue
            row = RowScore(dataset, label.metric, label.label, pair, found.probability)
            row.verdict_kind, row.verdicts = found.kind, [found.raw]
            rows.append(LabelledRow(row, found.kind, found.says_yes, True))
            continue
        score = review.score(label.sample_id, label.metric)
        described = spec(label.metric)
        sample = next(s for s in review.samples if s["sample_id"] == label.sample_id)
        raw = described.raw_verdicts(sample["details"][label.metric]) if described else None
        if score is None or described is None or not raw:
            stale += 1
            continue
        row = RowScore(dataset, label.metric, label.label, pair, score)
        row.verdict_kind, row.verdicts = described.verdict_kind, raw
        gate = review.gate(label.metric)
        rows.append(LabelledRow(row, label.metric, score >= gate, False, gate))
    return rows, stale


def _figure(group: str, measure: str, statistic: Any, n: int) -> Agreement:
    interval = bootstrap_statistic(statistic, n)
    return Agreement(TEAM, group, measure, statistic(np.arange(n)), interval, n)


def group_agreements(group: str, rows: Sequence[LabelledRow]) -> list[Agreement]:
    """agreement.py's figures for one group, then the judge's own yes/no (or the run's
    gate) and the calibration error of its probabilities."""
    found = agreements_for(TEAM, group, [replace(r.row, pair_id=None) for r in rows])
    binary = [r for r in rows if r.row.label in (0.0, 1.0)]
    if binary:
        said = np.array([float(r.judge_yes) for r in binary])
        truth = np.array([int(r.row.label or 0) for r in binary])
        gates = {r.gate for r in binary}
        name = "bal_acc@judge" if binary[0].is_verdict else "bal_acc@gate"
        if len(gates) == 1 and None not in gates:
            name = f"bal_acc@{gates.pop():.2f}"
        if all(a.measure != name for a in found):  # agreement_for's default gate may be it
            found.append(
                _figure(
                    group, name, lambda i: balanced_accuracy(said[i], truth[i], 0.5), len(binary)
                )
            )
    scores = np.array([r.row.score for r in rows], dtype=float)
    labels = np.array([r.row.label for r in rows], dtype=float)
    found.append(
        _figure(group, "ece", lambda i: expected_calibration_error(scores[i], labels[i]), len(rows))
    )
    return found


def reviewer_agreement(labels: Sequence[Label]) -> list[Agreement]:
    """Over items two reviewers labelled: the share of pairs of their labels on the same side
    of 0.5, and Cohen's kappa (agreement beyond what their label rates alone would give)."""
    by_item: dict[tuple[Any, ...], dict[str, float]] = defaultdict(dict)
    for label in labels:
        by_item[label.item][label.reviewer] = label.label
    pairs = [
        (a >= 0.5, b >= 0.5)
        for reviewers in by_item.values()
        for a, b in combinations(reviewers.values(), 2)
    ]
    if not pairs:
        return []
    first = np.array([a for a, _ in pairs], dtype=float)
    second = np.array([b for _, b in pairs], dtype=float)

    def share(i: np.ndarray) -> float:
        return float((first[i] == second[i]).mean())

    def kappa(i: np.ndarray) -> float | None:
        seen = share(i)
        p1, p2 = first[i].mean(), second[i].mean()
        chance = p1 * p2 + (1 - p1) * (1 - p2)
        return None if chance >= 1 else float((seen - chance) / (1 - chance))

    n = len(pairs)
    return [_figure(REVIEWERS, "agreement", share, n), _figure(REVIEWERS, "cohen_kappa", kappa, n)]


def calibrate_labels(refs: Sequence[str], db_path: Location | None = None) -> LabelCalibration:
    """The agreement figures over the labels of the runs `refs` names; UsageError when they
    hold no label."""
    runs: list[ReviewRun] = []
    rows: list[LabelledRow] = []
    every: list[Label] = []
    stale = 0
    for ref in dict.fromkeys(refs):
        review = load_review_run(ref, db_path)
        store = LabelStore.open(review.db)
        try:
            labels = store.current(review.run.id)
        finally:
            store.close()
        if not labels:
            raise UsageError(
                f"run {review.run.id} has no labels yet: `localeval review {ref}` makes them, "
                "`localeval labels import FILE --run RUN` brings them from a file"
            )
        found, missed = labelled_rows(review, labels)
        runs.append(review)
        rows += found
        stale += missed
        # reviewers agree or not on one run's item
        every += [replace(x, sample_id=f"{review.run.id}/{x.sample_id}") for x in labels]
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
    agreements += reviewer_agreement(every)
    return LabelCalibration(runs, rows, agreements, stale)
