"""Summary statistics with honest uncertainty: means with bootstrap 95% intervals.

Resampling uses a fixed seed so the same scores always give the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence
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
