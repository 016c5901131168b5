"""Summary statistics with honest uncertainty: means with bootstrap 95% intervals.

Resampling uses a fixed seed so the same scores always give the same interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240601


@dataclass(frozen=True)
class MetricSummary:
    """Mean of the defined scores, its 95% interval, and how many samples had no score."""

    mean: float | None
    n: int
    n_undefined: int
    ci95: tuple[float, float] | None

    def as_dict(self) -> dict[str, object]:
        return {
            "mean": self.mean,
            "n": self.n,
            "n_undefined": self.n_undefined,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
        }


def bootstrap_ci(
    values: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval of the mean; None for fewer than two values."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    rng = np.random.default_rng(seed)
    # resample in blocks so memory stays bounded for large runs
    means = np.empty(resamples)
    block = max(1, 2_000_000 // data.size)
    for start in range(0, resamples, block):
        count = min(block, resamples - start)
        picks = rng.integers(0, data.size, size=(count, data.size))
        means[start : start + count] = data[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def summarize(scores: Sequence[float | None]) -> MetricSummary:
    """Summarise one metric over samples; None scores are counted as undefined, not dropped."""
    defined = [s for s in scores if s is not None]
    undefined = len(scores) - len(defined)
    if not defined:
        return MetricSummary(None, 0, undefined, None)
    return MetricSummary(float(np.mean(defined)), len(defined), undefined, bootstrap_ci(defined))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=float)
    sorted_values = values[order]
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Probability that a positive scores above a negative (ties count half); None if a class
    is missing."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=int)
    positives, negatives = int((y == 1).sum()), int((y == 0).sum())
    if positives == 0 or negatives == 0:
        return None
    ranks = _ranks(s)
    return float((ranks[y == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation; None when either side is constant or n < 3."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size < 3:
        return None
    ra, rb = _ranks(a), _ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def pair_accuracy(better: Sequence[float], worse: Sequence[float]) -> float | None:
    """Share of pairs where the better item scores higher; ties count half."""
    b, w = np.asarray(better, dtype=float), np.asarray(worse, dtype=float)
    if b.size == 0:
        return None
    return float(((b > w).sum() + 0.5 * (b == w).sum()) / b.size)


def balanced_accuracy(
    scores: Sequence[float], labels: Sequence[int], threshold: float
) -> float | None:
    """Mean of the pass rate of positives and the fail rate of negatives, for a gate that
    passes scores >= threshold; None if a class is missing."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=int)
    if not (y == 1).any() or not (y == 0).any():
        return None
    passed = s >= threshold
    return float((passed[y == 1].mean() + (~passed[y == 0]).mean()) / 2)


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """The gate threshold with the highest balanced accuracy on these scores: halfway
    between two neighbouring scores (the lowest such, on a tie); None if a class is missing."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=int)
    positives, negatives = np.sort(s[y == 1]), np.sort(s[y == 0])
    if positives.size == 0 or negatives.size == 0:
        return None
    values = np.unique(s)
    candidates = np.concatenate(([values[0]], (values[:-1] + values[1:]) / 2))
    # for each candidate: positives at or above it (they pass), negatives below it (they fail)
    passed = positives.size - np.searchsorted(positives, candidates, side="left")
    failed = np.searchsorted(negatives, candidates, side="left")
    accuracy = (passed / positives.size + failed / negatives.size) / 2
    return float(candidates[int(np.argmax(accuracy))])


def bootstrap_statistic(
    statistic: Callable[[np.ndarray], float | None],
    n_items: int,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """Percentile 95% interval of `statistic(indices)` over resampled item indices.

    Resamples where the statistic is undefined (e.g. an AUC with one class) are skipped.
    """
    if n_items < 2:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        value = statistic(rng.integers(0, n_items, size=n_items))
        if value is not None:
            values.append(value)
    if len(values) < resamples // 2:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)
