"""A metric's mean corrected by people's labels (localeval.prediction_powered), as a run's
summary holds it: results.json's `summary.METRIC.corrected` with `labels_needed` beside it
(docs/reference.md), written and read here for every view, and the judge's scores and
people's values it is computed from (`correct`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.metrics.parts.explain import number
from localeval.prediction_powered import (
    MIN_LABELLED,
    Corrected,
    corrected_mean,
    labels_needed,
)
from localeval.results.person_values import MetricLabels, judged_throughout
from localeval.results.summary import NO_CATEGORY, ScoreColumns
from localeval.text import counted


@dataclass(frozen=True)
class CorrectedSummary:
    """The corrected mean of one metric (None: too few labelled samples), how many more
    labelled samples it needs, and the labels that were left out of it and why."""

    estimate: Corrected | None
    n_labelled: int
    needed: int
    #: complete samples outside the estimate's random sample (kept for calibrate)
    n_chosen: int = 0
    #: samples with some of their verdicts labelled and some not
    n_incomplete: int = 0
    #: the samples the judge scored (None: not recorded)
    n_samples: int | None = None
    #: verdicts whose reviewers' labels disagree (their mean is people's verdict)
    n_disagreeing: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The summary entry's keys: `corrected`, `labels_needed`, `labels_not_counted`."""
        return {
            "corrected": None if self.estimate is None else self.estimate.as_dict(),
            "labels_needed": self.needed,
            "labels_not_counted": {"chosen": self.n_chosen, "incomplete": self.n_incomplete},
            "labels_disagreeing": self.n_disagreeing,
        }

    @property
    def interval(self) -> tuple[float, float] | None:
        return None if self.estimate is None else self.estimate.ci95


def correct(
    judge: Sequence[float],
    sample_ids: Sequence[str],
    people: Mapping[str, float],
    left_out: tuple[int, int] = (0, 0),
    minimum: int = MIN_LABELLED,
    disagreeing: int = 0,
) -> CorrectedSummary:
    """The corrected mean of the judge's scores `judge` (NaN: undefined), one per sample of
    `sample_ids`, from people's values of the samples picked at random (`people`, by id);
    `left_out`: (chosen, incomplete) labelled samples not counted; `disagreeing`: verdicts
    whose reviewers disagree."""
    scores = np.asarray(judge, dtype=np.float64)
    defined = ~np.isnan(scores)
    labelled = [i for i, s in enumerate(sample_ids) if s in people and defined[i]]
    needed = labels_needed(len(labelled), minimum)
    estimate = None
    if not needed:
        estimate = corrected_mean(
            scores[defined],
            scores[labelled],
            [people[sample_ids[i]] for i in labelled],
        )
    return CorrectedSummary(
        estimate, len(labelled), needed, *left_out, int(defined.sum()), disagreeing
    )


def _pair(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, list) or len(value) != 2:
        return None
    low, high = number(value[0]), number(value[1])
    return None if low is None or high is None else (low, high)


def read_corrected(entry: Any) -> CorrectedSummary | None:
    """A summary entry's corrected mean, as written by as_dict; None for an entry without
    one (a results file from before it, a metric without verdicts) or a malformed one."""
    if not isinstance(entry, Mapping) or "labels_needed" not in entry:
        return None
    needed = entry.get("labels_needed")
    given = entry.get("corrected")
    left = entry.get("labels_not_counted")
    left = left if isinstance(left, Mapping) else {}
    counts = [v if isinstance(v, int) else 0 for v in (left.get("chosen"), left.get("incomplete"))]
    if not isinstance(needed, int):
        return None
    disagreeing = entry.get("labels_disagreeing")
    disagreeing = disagreeing if isinstance(disagreeing, int) else 0
    if not isinstance(given, Mapping):
        n_labelled = max(0, MIN_LABELLED - needed)
        return CorrectedSummary(None, n_labelled, needed, *counts, None, disagreeing)
    labels_only = given.get("labels_only")
    labels_only = labels_only if isinstance(labels_only, Mapping) else {}
    values = (
        number(given.get("mean")),
        _pair(given.get("ci95")),
        given.get("n_labelled"),
        number(given.get("judge_mean")),
        number(labels_only.get("mean")),
        _pair(labels_only.get("ci95")),
    )
    if any(v is None for v in values) or not isinstance(values[2], int):
        return None
    estimate = Corrected(*values, lam=math.nan)  # type: ignore[arg-type]
    return CorrectedSummary(estimate, estimate.n_labelled, needed, *counts, None, disagreeing)


def _span(interval: tuple[float, float]) -> str:
    return f"[{interval[0]:.3f}, {interval[1]:.3f}]"


def corrected_words(entry: CorrectedSummary, review: str, planned: int | None = None) -> str:
    """One metric's corrected mean in words, beside the judge's own and the labels' alone;
    or how many more samples to label, and how (`review`: the review command as shown;
    `planned`: the samples of a run stopped before it scored them all)."""
    left = []
    if entry.n_chosen:
        left.append(
            f"{entry.n_chosen} labelled where the estimate's random order has not reached "
            "(kept for calibrate)"
        )
    if entry.n_incomplete:
        left.append(f"{entry.n_incomplete} with verdicts still unlabelled")
    not_counted = f"; not counted: {', '.join(left)}" if left else ""
    if entry.n_disagreeing:
        disagreeing = counted(entry.n_disagreeing, "verdict")
        not_counted += f"; reviewers disagree on {disagreeing} (their mean counts)"
    found = entry.estimate
    wanted = entry.n_labelled + entry.needed
    if found is None and entry.n_samples is not None and entry.n_samples < wanted:
        has = f"only {entry.n_samples} samples"
        if planned is not None and planned > entry.n_samples:  # stopped short: it has more
            has = f"{entry.n_samples} of its {planned} samples scored"
        return (
            f"a mean corrected by people's labels needs {wanted} labelled samples; this run "
            f"has {has}{not_counted}"
        )
    if found is None:
        return (
            f"label {entry.needed} more samples for the mean people would give "
            f"({entry.n_labelled} of {wanted} labelled; {review}, "
            f'"label for the estimate"){not_counted}'
        )
    return (
        f"{found.mean:.3f} {_span(found.ci95)} corrected by {found.n_labelled} labelled "
        f"samples (the judge's mean {found.judge_mean:.3f}; labels alone "
        f"{found.labels_only_mean:.3f} {_span(found.labels_only_ci95)}){not_counted}"
    )


def corrected_line(
    metric: str, entry: CorrectedSummary, run_id: str | None, planned: int | None = None
) -> str:
    """One metric's corrected line, as plain text."""
    review = f"`localeval review {run_id or 'RUN'}`"
    return f"{metric}: {corrected_words(entry, review, planned)}"


def corrected_lines(
    corrected: Mapping[str, CorrectedSummary], run_id: str | None, planned: int | None = None
) -> list[str]:
    """Every metric's corrected line, in the run's order; metrics that still need the same
    labels share one ("faithfulness, context_recall: label 40 more samples ...")."""
    review = f"`localeval review {run_id or 'RUN'}`"
    groups: list[tuple[list[str], str]] = []
    shared: dict[str, list[str]] = {}  # a request for labels, by its words: its metrics
    for metric, entry in corrected.items():
        words = corrected_words(entry, review, planned)
        if entry.estimate is None and words in shared:
            shared[words].append(metric)
            continue
        groups.append(([metric], words))
        if entry.estimate is None:
            shared[words] = groups[-1][0]
    return [f"{', '.join(metrics)}: {words}" for metrics, words in groups]


@dataclass(frozen=True)
class RunCorrected:
    """Per metric a person's value is defined for, its corrected summary; and per category."""

    overall: Mapping[str, CorrectedSummary] = field(default_factory=dict)
    by_category: Mapping[str, Mapping[str, CorrectedSummary]] = field(default_factory=dict)


def corrected_for(
    columns: ScoreColumns,
    metrics: Sequence[str],
    labelled: Mapping[str, MetricLabels],
    settings: Mapping[str, Any],
) -> RunCorrected:
    """The corrected summaries of a run's `metrics` that people's values are defined for
    on every sample (`settings`: the run's metric settings)."""
    overall: dict[str, CorrectedSummary] = {}
    by_category: dict[str, dict[str, CorrectedSummary]] = {}
    groups: dict[str, list[int]] = {}
    for index, category in enumerate(columns.categories):
        groups.setdefault(category or NO_CATEGORY, []).append(index)
    for metric in metrics:
        if not judged_throughout(metric, settings) or metric not in columns.scores:
            continue
        found = labelled.get(metric, MetricLabels(metric))
        left_out = (found.n_chosen, len(found.missing))
        scores = columns.scores[metric]
        overall[metric] = correct(
            scores, columns.sample_ids, found.counted, left_out, disagreeing=found.disagreements
        )
        for category, members in sorted(groups.items()):
            ids = [columns.sample_ids[i] for i in members]
            entry = correct(scores[members], ids, found.counted)
            by_category.setdefault(category, {})[metric] = entry
    return RunCorrected(overall, by_category)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def read_corrections(given: Any) -> dict[str, CorrectedSummary]:
    """A results dict's summary's corrected means (`summary.METRIC.corrected`), by metric."""
    found = {str(m): read_corrected(entry) for m, entry in _mapping(given).items()}
    return {metric: entry for metric, entry in found.items() if entry is not None}


def read_category_corrections(given: Any) -> dict[str, dict[str, CorrectedSummary]]:
    """`summary_by_category`'s corrected means, by category and metric."""
    return {
        str(category): read_corrections(entries) for category, entries in _mapping(given).items()
    }
