"""Comparing two runs: is NEW better or worse than BASE, or is the difference noise?

A judge errs on some verdicts, so two means alone cannot say. For each metric the samples
both runs scored are paired, and the mean of their differences (NEW - BASE) gets a 95%
bootstrap interval (pairs resampled, seeded, so the same runs always give the same
interval). The verdict is read from the interval: wholly above zero is better, wholly below
is worse, and an interval that holds zero is no detectable change. The regression gate
fails a metric only when it is worse by more than a tolerance AND its interval excludes 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from localeval.errors import UsageError
from localeval.metrics import spec
from localeval.metrics.base import Details
from localeval.metrics.parts.explain import generic_changes
from localeval.prediction_powered import MIN_LABELLED, Corrected, corrected_mean
from localeval.results.comparability import comparability_warnings
from localeval.results.summary import NO_CATEGORY
from localeval.results.view import RunView
from localeval.stats import bootstrap_ci

BETTER, WORSE, NO_CHANGE = "better", "worse", "no detectable change"
NOT_COMPARED = "no sample scored in both"
DEFAULT_MAX_DROP = 0.02
DEFAULT_TOP = 5
#: a difference smaller than this is rounding, not change
_EPSILON = 1e-9
#: lines of evidence shown for a sample that moved
MAX_LINES = 3


def explain_change(metric: str, base: Details | None, new: Details | None) -> list[str]:
    """A few lines on what changed in a sample's evidence, most important first (each
    metric says how: MetricSpec.explain; the detail fields that differ otherwise)."""
    base_reason = (base or {}).get("undefined_reason")
    new_reason = (new or {}).get("undefined_reason")
    if new_reason and not base_reason:
        return [f"now undefined: {new_reason}"]
    if base_reason and not new_reason:
        return [f"was undefined: {base_reason}"]
    found = spec(metric)
    explain = found.explain if found is not None and found.explain is not None else None
    lines = (explain or generic_changes)(base, new)
    lines.sort(key=lambda line: -line[0])  # stable: equal weights keep their order
    text = [line for _, line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        text.append(f"... and {len(lines) - MAX_LINES} more")
    return text


@dataclass(frozen=True)
class MetricChange:
    """One metric, BASE against NEW."""

    metric: str
    base_mean: float | None
    new_mean: float | None
    n_paired: int
    change: float | None  # mean of NEW - BASE over the paired samples
    ci95: tuple[float, float] | None
    verdict: str
    #: the change people would see: PPI++ on the paired changes, from the samples both
    #: runs have labelled at random (None: fewer than MIN_LABELLED), and how many those are
    corrected: Corrected | None = None
    n_labelled_in_both: int = 0

    def worse_than(self, max_drop: float) -> bool:
        """The regression gate: a drop beyond the tolerance that the interval says is real."""
        return (
            self.change is not None
            and self.ci95 is not None
            and self.change < -max_drop
            and self.ci95[1] < 0
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "base_mean": self.base_mean,
            "new_mean": self.new_mean,
            "n_paired": self.n_paired,
            "change": self.change,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
            "verdict": self.verdict,
            "corrected": None if self.corrected is None else self.corrected.as_dict(),
            "n_labelled_in_both": self.n_labelled_in_both,
        }


def corrected_change(
    change: MetricChange,
    scores: tuple[np.ndarray, np.ndarray],
    sample_ids: list[str],
    people: tuple[Mapping[str, float], Mapping[str, float]],
) -> MetricChange:
    """The change with the one people would see, where both runs have labelled the same
    samples at random (the common part of two random samples is one): the judge's paired
    changes on every sample, corrected by people's paired changes on those."""
    base, new = scores
    both = ~np.isnan(base) & ~np.isnan(new)
    common = [k for k, s in enumerate(sample_ids) if both[k] and s in people[0] and s in people[1]]
    if len(common) < MIN_LABELLED or not common:
        return replace(change, n_labelled_in_both=len(common))
    differences = new - base
    found = corrected_mean(
        differences[both],
        differences[common],
        [people[1][sample_ids[k]] - people[0][sample_ids[k]] for k in common],
        bounds=(-1.0, 1.0),
    )
    return replace(change, corrected=found, n_labelled_in_both=len(common))


@dataclass(frozen=True)
class SampleChange:
    """A sample whose score for a metric moved, and why, from the two runs' evidence."""

    metric: str
    sample_id: str
    category: str | None
    base: float | None
    new: float | None
    evidence: list[str] = field(default_factory=list)

    @property
    def change(self) -> float | None:
        return None if self.base is None or self.new is None else self.new - self.base

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "sample_id": self.sample_id,
            "category": self.category,
            "base": self.base,
            "new": self.new,
            "change": self.change,
            "evidence": self.evidence,
        }


@dataclass
class Comparison:
    base: RunView
    new: RunView
    warnings: list[str]
    n_shared: int
    n_base_only: int
    n_new_only: int
    metrics: list[MetricChange]
    by_category: dict[str, list[MetricChange]]
    movers: list[SampleChange]
    not_compared: list[str]  # metrics in only one of the runs
    top: int = DEFAULT_TOP  # how many movers per metric were asked for

    def regressions(self, max_drop: float = DEFAULT_MAX_DROP) -> list[MetricChange]:
        return [m for m in self.metrics if m.worse_than(max_drop)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "base": {"label": self.base.label, "run": self.base.run},
            "new": {"label": self.new.label, "run": self.new.run},
            "warnings": self.warnings,
            "samples": {
                "shared": self.n_shared,
                "base_only": self.n_base_only,
                "new_only": self.n_new_only,
            },
            "metrics": [m.as_dict() for m in self.metrics],
            "by_category": {c: [m.as_dict() for m in ms] for c, ms in self.by_category.items()},
            "movers": [m.as_dict() for m in self.movers],
            "not_compared": self.not_compared,
        }


def _mean(values: np.ndarray) -> float | None:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else None


def verdict(ci95: tuple[float, float] | None) -> str:
    """Better or worse only when the interval of the change excludes zero."""
    if ci95 is not None and ci95[0] > 0:
        return BETTER
    if ci95 is not None and ci95[1] < 0:
        return WORSE
    return NO_CHANGE


def compare_metric(metric: str, base: np.ndarray, new: np.ndarray) -> MetricChange:
    """`base` and `new` hold the metric's scores of the same samples, in the same order;
    NaN where undefined. The means are over each side's defined scores."""
    both = ~np.isnan(base) & ~np.isnan(new)
    differences = new[both] - base[both]
    if not differences.size:
        return MetricChange(metric, _mean(base), _mean(new), 0, None, None, NOT_COMPARED)
    if np.all(np.abs(differences) < _EPSILON):
        ci95: tuple[float, float] | None = (0.0, 0.0)  # identical scores: no resampling needed
    else:
        ci95 = bootstrap_ci(differences)
    return MetricChange(
        metric,
        _mean(base),
        _mean(new),
        int(differences.size),
        float(differences.mean()),
        ci95,
        verdict(ci95),
    )


def compare_runs(base: RunView, new: RunView, top: int = DEFAULT_TOP) -> Comparison:
    """Compare NEW with BASE on the samples (by sample_id) and metrics both hold."""
    base_rows, new_rows = _shared_rows(base, new)
    n_shared = len(new_rows)
    metrics = [m for m in new.metrics if m in base.columns.scores]
    not_compared = [m for m in base.metrics + new.metrics if m not in metrics]
    base_pick, new_pick = np.asarray(base_rows), np.asarray(new_rows)
    paired = {
        m: (base.columns.scores[m][base_pick], new.columns.scores[m][new_pick]) for m in metrics
    }

    # a sample's category as NEW has it (BASE's if NEW has none)
    categories = [
        new.columns.categories[j] or base.columns.categories[i] or NO_CATEGORY
        for i, j in zip(base_rows, new_rows, strict=True)
    ]
    by_category = _by_category(categories, paired, metrics)
    movers: list[SampleChange] = []
    shared_ids = [new.columns.sample_ids[j] for j in new_rows]
    for metric in metrics:
        movers += _largest_changes(metric, paired[metric], shared_ids, categories, top, base, new)

    return Comparison(
        base=base,
        new=new,
        warnings=comparability_warnings(base.run, new.run, metrics),
        n_shared=n_shared,
        n_base_only=len(base.columns.sample_ids) - n_shared,
        n_new_only=len(new.columns.sample_ids) - n_shared,
        metrics=[
            corrected_change(
                compare_metric(m, *paired[m]),
                paired[m],
                shared_ids,
                (base.people.get(m, {}), new.people.get(m, {})),
            )
            for m in metrics
        ],
        by_category=by_category,
        movers=movers,
        not_compared=list(dict.fromkeys(not_compared)),
        top=top,
    )


def _shared_rows(base: RunView, new: RunView) -> tuple[list[int], list[int]]:
    """The rows of BASE and of NEW that hold the same samples, pair by pair (in NEW's
    order); UsageError when they share none."""
    base_index = {sample_id: i for i, sample_id in enumerate(base.columns.sample_ids)}
    new_rows: list[int] = []
    base_rows: list[int] = []
    for j, sample_id in enumerate(new.columns.sample_ids):
        if sample_id in base_index:
            new_rows.append(j)
            base_rows.append(base_index[sample_id])
    if not new_rows:
        raise UsageError(
            f"{base.label} and {new.label} share no sample_id: nothing to compare"
            + _line_number_hint(base.columns.sample_ids, new.columns.sample_ids)
        )
    return base_rows, new_rows


def _by_category(
    categories: list[str],
    paired: dict[str, tuple[np.ndarray, np.ndarray]],
    metrics: list[str],
) -> dict[str, list[MetricChange]]:
    """Each metric's change within each category (none when all share one)."""
    by_category: dict[str, list[MetricChange]] = {}
    if len(set(categories)) > 1:
        members: dict[str, list[int]] = {}
        for k, category in enumerate(categories):
            members.setdefault(category, []).append(k)
        for category, rows in sorted(members.items()):
            pick = np.asarray(rows)
            by_category[category] = [
                compare_metric(m, paired[m][0][pick], paired[m][1][pick]) for m in metrics
            ]
    return by_category


def _line_number_hint(base_ids: list[str], new_ids: list[str]) -> str:
    """Rows without a sample_id were named by their line before they were named by their
    question: two such runs of one dataset share no id."""
    numbered = [ids for ids in (base_ids, new_ids) if ids and all(i.isdigit() for i in ids)]
    if len(numbered) == 1:
        return (
            " (one run names its samples by line number, as localeval did for rows without a "
            "sample_id before naming them by their question: evaluate its data again)"
        )
    return ""


def _largest_changes(
    metric: str,
    scores: tuple[np.ndarray, np.ndarray],
    sample_ids: list[str],
    categories: list[str],
    top: int,
    base: RunView,
    new: RunView,
) -> list[SampleChange]:
    """The `top` samples whose score moved most (a score that became undefined, or defined,
    counts as the largest move), each with the evidence for the move."""
    before, after = scores
    defined_before, defined_after = ~np.isnan(before), ~np.isnan(after)
    size = np.where(defined_before & defined_after, np.abs(after - before), np.inf)
    size[~defined_before & ~defined_after] = 0.0
    moved = np.flatnonzero(size > _EPSILON)
    # largest first; ties in dataset order (a stable sort)
    order = moved[np.argsort(-size[moved], kind="stable")][:top]
    changes = []
    for k in order:
        sample_id = sample_ids[k]
        old = None if np.isnan(before[k]) else float(before[k])
        now = None if np.isnan(after[k]) else float(after[k])
        evidence = explain_change(
            metric, base.details(sample_id, metric), new.details(sample_id, metric)
        )
        category = None if categories[k] == NO_CATEGORY else categories[k]
        changes.append(SampleChange(metric, sample_id, category, old, now, evidence))
    return changes
