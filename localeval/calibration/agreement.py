"""How far the judge can be trusted: agreement of metric scores with human labels.

Each labelled row names the metric it tests (`metric`) and carries a `label`; rows that
share a `pair_id` differ only in the judged part. Agreement is reported per dataset and
metric as:

* pair accuracy: over pairs with different labels, how often the better row scores
  higher (ties count half) -- the measure of the Ragas paper;
* ROC AUC, for 0/1 labels; with them, the gate threshold that best separates the two
  classes (`best_threshold`, chosen on these rows), the balanced accuracy of a gate there
  (`bal_acc@best`, optimistic: measured on the rows that chose it) and at the metric's
  default gate (`bal_acc@0.80`): whether a gate on this judge's scores means anything;
* Spearman's rho, for graded labels;
* chunk AUC, for rows with `context_labels`: how well each chunk's usefulness probability
  separates the chunks a person marked as needed;
* A/B accuracy, for `pairwise` rows (`label` +1: B better, -1: A better; ties count half);
* sign agreement, for rows of another metric that carry two answers (`answer_a`,
  `answer_b`) and a preference `label` (> 0: B better, < 0: A better; 0 rows left out):
  each answer is scored alone, and the sign of score B - score A is checked against the
  label's (a tie counts half), and against each per-aspect label in `meta`
  (`correctness_label`: "sign_agreement:correctness");

each with a bootstrap 95% interval and n, and the count of undefined scores and of
outputs the judge failed to produce in the required form.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from localeval.calibration.rows import PAIRWISE, SCORED_AS, RowScore, score_row
from localeval.data.samples import Sample
from localeval.metrics import REGISTRY, Tools
from localeval.results.gates import DEFAULT_THRESHOLDS
from localeval.stats import (
    BinaryScores,
    best_threshold,
    bootstrap_statistic,
    bootstrap_statistics,
    pair_accuracy,
    roc_auc,
    spearman,
)

#: further figures of rows labelled 0 and 1, given them (sorted by score): each its measure
#: and its value of a resample, given the indices of the rows drawn (None: the rows as
#: they are)
MoreFigures = Callable[
    [BinaryScores], list[tuple[str, Callable[[np.ndarray | None], float | None]]]
]


@dataclass(frozen=True)
class Agreement:
    """One agreement figure for one dataset and metric."""

    dataset: str
    metric: str
    measure: str
    value: float | None
    ci95: tuple[float, float] | None
    n: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "metric": self.metric,
            "measure": self.measure,
            "value": self.value,
            "ci95": list(self.ci95) if self.ci95 else None,
            "n": self.n,
        }


@dataclass
class Calibration:
    """Every agreement figure, with the rows behind them."""

    agreements: list[Agreement]
    rows: list[RowScore] = field(default_factory=list)

    def counts(self) -> dict[tuple[str, str], dict[str, int]]:
        """Rows, undefined scores and unparseable outputs per (dataset, metric)."""
        out: dict[tuple[str, str], dict[str, int]] = defaultdict(
            lambda: {"rows": 0, "undefined": 0, "unparseable": 0}
        )
        for row in self.rows:
            entry = out[(row.dataset, row.metric)]
            entry["rows"] += 1
            entry["undefined"] += row.score is None and row.chunk_scores is None
            entry["unparseable"] += row.unparseable
        return dict(out)


def _interval(
    statistic: Callable[[np.ndarray], float | None], n: int
) -> tuple[float, float] | None:
    return bootstrap_statistic(statistic, n)


def _labelled(rows: Sequence[RowScore]) -> list[tuple[float, float, RowScore]]:
    """(label, score, row) for the rows that have both."""
    return [(r.label, r.score, r) for r in rows if r.label is not None and r.score is not None]


def _pairs(rows: Sequence[RowScore]) -> tuple[list[float], list[float]]:
    """(better, worse) scores over all pairs of rows sharing a pair_id with different labels."""
    groups: dict[Any, list[tuple[float, float]]] = defaultdict(list)
    for label, score, row in _labelled(rows):
        if row.pair_id is not None:
            groups[row.pair_id].append((label, score))
    better: list[float] = []
    worse: list[float] = []
    for members in groups.values():
        for (label_a, score_a), (label_b, score_b) in combinations(members, 2):
            if label_a == label_b:
                continue
            better.append(score_a if label_a > label_b else score_b)
            worse.append(score_b if label_a > label_b else score_a)
    return better, worse


def agreements_for(
    dataset: str,
    metric: str,
    rows: Sequence[RowScore],
    pairs: bool = True,
    more: MoreFigures | None = None,
) -> list[Agreement]:
    """Every measure that the labels of these rows support (`pairs`: pair accuracy too, over
    the rows that share a pair_id); where they are 0 and 1, the figures `more` makes of the
    same rows too, their intervals drawn with the others'."""
    if metric == PAIRWISE:
        return _ab_accuracy(dataset, metric, rows)
    if any(r.preference for r in rows):
        return _sign_agreement(dataset, metric, rows)
    found = _pair_accuracy(dataset, metric, rows) if pairs else []
    scored = _labelled(rows)
    labels = {label for label, _, _ in scored}
    s = np.array([score for _, score, _ in scored])
    y = np.array([label for label, _, _ in scored])
    if labels == {0.0, 1.0}:
        found += _gate_figures(dataset, metric, s, y.astype(int), more)
    elif len(labels) > 2:
        found.append(
            Agreement(
                dataset,
                metric,
                "spearman",
                spearman(s, y),
                _interval(lambda i: spearman(s[i], y[i]), s.size),
                s.size,
            )
        )
    return found + _chunk_auc(dataset, metric, rows)


def _ab_accuracy(dataset: str, metric: str, rows: Sequence[RowScore]) -> list[Agreement]:
    """Pairwise rows: score P(B better) in [0, 1]; label +1 B better, -1 A better; a tie
    counts half."""
    right = np.array(
        [
            0.5 if score == 0.5 else float((score > 0.5) == (label > 0))
            for label, score, _ in _labelled(rows)
        ]
    )
    if not right.size:
        return []
    statistic = _interval(lambda i: float(right[i].mean()), right.size)
    return [Agreement(dataset, metric, "ab_accuracy", float(right.mean()), statistic, right.size)]


def _sign_agreement(dataset: str, metric: str, rows: Sequence[RowScore]) -> list[Agreement]:
    """Two-answer rows: how often the sign of score B - score A is the label's, for the
    overall label and each aspect's; rows whose label is 0 are left out, a tie counts half."""
    scored = [r for r in rows if r.score is not None]
    targets = [("sign_agreement", [(r.label, r.score) for r in scored])]
    for aspect in sorted({a for r in scored for a in (r.aspects or {})}):
        labels = [((r.aspects or {}).get(aspect), r.score) for r in scored]
        targets.append((f"sign_agreement:{aspect}", labels))
    found = []
    for measure, pairs in targets:
        right = np.array(
            [
                0.5 if score == 0 else float((score > 0) == (label > 0))
                for label, score in pairs
                if label is not None and score is not None and label != 0
            ]
        )
        if right.size:
            interval = _interval(lambda i, right=right: float(right[i].mean()), right.size)
            found.append(
                Agreement(dataset, metric, measure, float(right.mean()), interval, right.size)
            )
    return found


def _pair_accuracy(dataset: str, metric: str, rows: Sequence[RowScore]) -> list[Agreement]:
    better, worse = _pairs(rows)
    if not better:
        return []
    b, w = np.array(better), np.array(worse)
    return [
        Agreement(
            dataset,
            metric,
            "pair_accuracy",
            pair_accuracy(b, w),
            _interval(lambda i: pair_accuracy(b[i], w[i]), b.size),
            b.size,
        )
    ]


def _chunk_auc(dataset: str, metric: str, rows: Sequence[RowScore]) -> list[Agreement]:
    chunk_scores: list[float] = []
    chunk_labels: list[int] = []
    for r in rows:
        if r.chunk_scores is not None and r.chunk_labels is not None:
            chunk_scores += r.chunk_scores
            chunk_labels += r.chunk_labels
    if not chunk_scores:
        return []
    cs, cl = np.array(chunk_scores), np.array(chunk_labels)
    return [
        Agreement(
            dataset,
            metric,
            "chunk_auc",
            roc_auc(cs, cl),
            _interval(lambda i: roc_auc(cs[i], cl[i]), cs.size),
            cs.size,
        )
    ]


def _gate_figures(
    dataset: str, metric: str, s: np.ndarray, y: np.ndarray, more: MoreFigures | None = None
) -> list[Agreement]:
    """ROC AUC; where a gate on these scores should sit, and how well it and the default
    gate separate the rows labelled 1 from those labelled 0; then `more` (a measure the
    others have is not made twice). Their intervals come from one set of resamples, each
    drawn once (and never sorted: the rows are, once)."""
    rows = BinaryScores(s, y)
    figures: list[tuple[str, float | None, Callable[[np.ndarray], float | None]]] = [
        ("roc_auc", rows.roc_auc(), rows.roc_auc)
    ]
    best = rows.best_gate()
    if best is not None:

        def gate_at_best(drawn: np.ndarray, part: int) -> float | None:
            found = rows.best_gate(drawn)
            return None if found is None else found[part]

        figures += [
            ("best_threshold", best[0], lambda i: gate_at_best(i, 0)),
            ("bal_acc@best", rows.balanced_accuracy(best[0]), lambda i: gate_at_best(i, 1)),
        ]
        default = DEFAULT_THRESHOLDS.get(SCORED_AS.get(metric, metric))
        if default is not None:
            figures.append(
                (
                    f"bal_acc@{default:.2f}",
                    rows.balanced_accuracy(default),
                    lambda i: rows.balanced_accuracy(default, i),
                )
            )
    for measure, statistic in more(rows) if more is not None else []:
        if all(measure != made for made, _, _ in figures):
            figures.append((measure, statistic(None), statistic))
    intervals = bootstrap_statistics([f for _, _, f in figures], s.size)
    return [
        Agreement(dataset, metric, measure, value, interval, s.size)
        for (measure, value, _), interval in zip(figures, intervals, strict=True)
    ]


def calibrate(
    rows: Iterable[tuple[str, Sample]],
    tools: Tools,
    compare: Callable[[Sample, Tools], float] | None = None,
    on_row: Callable[[RowScore], None] | None = None,
    score_with: str | None = None,
) -> Calibration:
    """Score (dataset, sample) rows and measure agreement per dataset and metric (every row
    with `score_with` instead of the metric it names, when given)."""
    scored: list[RowScore] = []
    for dataset, sample in rows:
        row = score_row(sample, tools, dataset, compare, score_with)
        scored.append(row)
        if on_row is not None:
            on_row(row)
    groups: dict[tuple[str, str], list[RowScore]] = defaultdict(list)
    for row in scored:
        groups[(row.dataset, row.metric)].append(row)
    agreements = [
        a for (d, m), members in sorted(groups.items()) for a in agreements_for(d, m, members)
    ]
    return Calibration(agreements, scored)


def suggested_thresholds(calibration: Calibration) -> dict[str, float]:
    """Per metric the judge scores, the gate threshold that best separates the rows labelled
    1 from those labelled 0, over every 0/1-labelled dataset of that metric together,
    rounded to two decimals: what to put in the judge's models.toml `thresholds`."""
    groups: dict[tuple[str, str], list[RowScore]] = defaultdict(list)
    for row in calibration.rows:
        if row.metric != PAIRWISE and row.label is not None and row.score is not None:
            groups[(row.dataset, row.metric)].append(row)
    pooled: dict[str, list[RowScore]] = defaultdict(list)
    for (_, metric), rows in groups.items():
        name = SCORED_AS.get(metric, metric)
        # graded labels say nothing about a pass/fail line; context precision is on the
        # embedder's scale for some samples, not the judge's
        described = REGISTRY[name]
        if {r.label for r in rows} == {0.0, 1.0} and described.uses_judge and described.judge_gate:
            pooled[name] += rows
    found: dict[str, float] = {}
    for name, rows in sorted(pooled.items()):
        threshold = best_threshold([r.score for r in rows], [int(r.label) for r in rows])
        if threshold is not None:
            found[name] = round(threshold, 2)
    return found
