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
    sorted_values = values[order]
    # each run of equal values: where it starts and ends in the sorted order
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], len(values)] - 1
    ranks = np.empty(len(values), dtype=float)
    ranks[order] = np.repeat((starts + ends) / 2.0 + 1.0, ends - starts + 1)
    return ranks


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Probability that a positive scores above a negative (ties count half); None if a class
    is missing."""
    return BinaryScores(scores, labels).roc_auc()


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
    return BinaryScores(scores, labels).balanced_accuracy(threshold)


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """The gate threshold with the highest balanced accuracy on these scores: halfway
    between two neighbouring scores (the lowest such, on a tie); None if a class is missing."""
    found = BinaryScores(scores, labels).best_gate()
    return None if found is None else found[0]


class BinaryScores:
    """Scores of rows labelled 1 or 0 (rows labelled otherwise are left out), sorted once into
    levels, one per distinct score: the figures of a gate on them, of the rows as they are
    or of a resample (`drawn`: the indices of the rows drawn), counted per level without
    sorting the resample. A resample's counts are kept for the next figure of the same one."""

    def __init__(self, scores: Sequence[float], labels: Sequence[int]):
        s = np.asarray(scores, dtype=float)
        y = np.asarray(labels, dtype=int)
        binary = (y == 0) | (y == 1)
        self.levels, level = np.unique(s[binary], return_inverse=True)
        #: each row's level and label in one index, level * 2 + label (2 * levels: left out)
        self._cells = np.full(s.size, 2 * self.levels.size)
        self._cells[binary] = level.reshape(-1) * 2 + y[binary]
        self._counted: tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray]] | None = None

    def counts(self, drawn: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per level, the rows labelled 1 and the rows labelled 0 (of the resample `drawn`)."""
        if self._counted is not None and self._counted[0] is drawn:
            return self._counted[1]
        cells = self._cells if drawn is None else self._cells[drawn]
        both = np.bincount(cells, minlength=2 * self.levels.size + 1).astype(float)
        found = both[1:-1:2], both[0:-1:2]
        self._counted = (drawn, found)
        return found

    def roc_auc(self, drawn: np.ndarray | None = None) -> float | None:
        positives, negatives = self.counts(drawn)
        p, n = positives.sum(), negatives.sum()
        if p == 0 or n == 0:
            return None
        below = np.cumsum(negatives) - negatives
        return float((positives * (below + 0.5 * negatives)).sum() / (p * n))

    def balanced_accuracy(self, threshold: float, drawn: np.ndarray | None = None) -> float | None:
        positives, negatives = self.counts(drawn)
        p, n = positives.sum(), negatives.sum()
        if p == 0 or n == 0:
            return None
        failing = int(np.searchsorted(self.levels, threshold, side="left"))
        return float(((p - positives[:failing].sum()) / p + negatives[:failing].sum() / n) / 2)

    def best_gate(self, drawn: np.ndarray | None = None) -> tuple[float, float] | None:
        """The gate with the highest balanced accuracy, and that accuracy: the lowest score,
        or halfway between two neighbouring scores (the lowest such, on a tie)."""
        positives, negatives = self.counts(drawn)
        p, n = positives.sum(), negatives.sum()
        if p == 0 or n == 0:
            return None
        present = (positives + negatives) > 0
        values, positives, negatives = self.levels[present], positives[present], negatives[present]
        candidates = np.concatenate(([values[0]], (values[:-1] + values[1:]) / 2))
        # at each candidate: positives at or above it (they pass), negatives below (they fail)
        passed = p - (np.cumsum(positives) - positives)
        failed = np.cumsum(negatives) - negatives
        accuracy = (passed / p + failed / n) / 2
        best = int(np.argmax(accuracy))
        return float(candidates[best]), float(accuracy[best])


def bootstrap_statistic(
    statistic: Callable[[np.ndarray], float | None],
    n_items: int,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """Percentile 95% interval of `statistic(indices)` over resampled item indices.

    Resamples where the statistic is undefined (e.g. an AUC with one class) are skipped.
    """
    return bootstrap_statistics([statistic], n_items, resamples, seed)[0]


def bootstrap_statistics(
    statistics: Sequence[Callable[[np.ndarray], float | None]],
    n_items: int,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[tuple[float, float] | None]:
    """`bootstrap_statistic` of several statistics over the same resamples, each drawn once
    and given to every statistic (which may keep what it made of one for the next)."""
    if n_items < 2:
        return [None] * len(statistics)
    rng = np.random.default_rng(seed)
    return _intervals(statistics, lambda: rng.integers(0, n_items, size=n_items), resamples)


def bootstrap_cells(
    statistics: Sequence[Callable[[np.ndarray], float | None]],
    sizes: Sequence[float] | np.ndarray,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[tuple[float, float] | None]:
    """`bootstrap_statistics` of items that fall into a few kinds alike for the statistics
    (`sizes`: how many items of each kind): a resample is drawn as its count of each kind,
    multinomially, which is drawing the items one by one in law, in a time that does not
    grow with their number. A statistic is given the counts of each kind."""
    n_items = int(np.sum(sizes))
    if n_items < 2:
        return [None] * len(statistics)
    rng = np.random.default_rng(seed)
    shares = np.asarray(sizes, dtype=float) / n_items
    return _intervals(statistics, lambda: rng.multinomial(n_items, shares), resamples)


def _intervals(
    statistics: Sequence[Callable[[np.ndarray], float | None]],
    draw: Callable[[], np.ndarray],
    resamples: int,
) -> list[tuple[float, float] | None]:
    """Each statistic's percentile 95% interval over `resamples` draws (a draw given to every
    statistic); resamples where one is undefined are skipped, and an interval needs half
    of them defined."""
    values: list[list[float]] = [[] for _ in statistics]
    for _ in range(resamples):
        given = draw()
        for found, statistic in zip(values, statistics, strict=True):
            value = statistic(given)
            if value is not None:
                found.append(value)
    return [_percentile_interval(found, resamples) for found in values]


def _percentile_interval(values: list[float], resamples: int) -> tuple[float, float] | None:
    if len(values) < resamples // 2:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)
