"""The mean people would give, estimated from the judge's scores on every sample and
people's values on a random few: prediction-powered inference with power tuning (PPI++:
Angelopoulos, Duchi and Zrnic 2023, "PPI++: Efficient Prediction-Powered Inference").

    estimate = lam * mean(judge, all samples) + mean(people - lam * judge, labelled samples)

The second term corrects the judge's bias, measured where both are known. `lam` in [0, 1]
weighs how much the judge is trusted: the value that makes the interval narrowest,
estimated from the labelled samples, then clipped, so that a judge that agrees poorly
with people (lam near 0) gives the labels-only interval, never a wider one. The 95%
interval is the normal one of both terms' variances, as the method's reference library
(ppi-python's `ppi_mean_ci`) computes it, with sample variances (n - 1): the cross-check
is tests/test_prediction_powered.py. docs/decisions.md says why these few lines and not
that library.

Valid only when the labelled samples are a simple random sample of the run's samples
(the review page's "label for the estimate" mode, or an import said to be random).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: fewer labelled samples than this give no corrected estimate: the normal interval's
#: coverage fell to 0.91 at 20 on a held-out set (0.92 on a dev set) and held at 0.96-0.97
#: at 40 on all seven sets measured (docs/measurements/judge-quality.md, "Corrected by labels")
MIN_LABELLED = 40
#: the normal distribution's 97.5% quantile: a two-sided 95% interval
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Corrected:
    """The corrected mean of one metric over a run's samples, beside what it is made of."""

    mean: float
    ci95: tuple[float, float]
    n_labelled: int
    #: the judge's own mean over all the samples
    judge_mean: float
    #: the labelled samples' mean of people's values, and its interval (the judge unused)
    labels_only_mean: float
    labels_only_ci95: tuple[float, float]
    #: how much the judge was trusted (0: labels only, 1: plain PPI)
    lam: float

    def as_dict(self) -> dict[str, object]:
        return {
            "mean": round(self.mean, 4),
            "ci95": [round(v, 4) for v in self.ci95],
            "n_labelled": self.n_labelled,
            "judge_mean": round(self.judge_mean, 4),
            "labels_only": {
                "mean": round(self.labels_only_mean, 4),
                "ci95": [round(v, 4) for v in self.labels_only_ci95],
            },
        }


def labels_needed(n_labelled: int, minimum: int = MIN_LABELLED) -> int:
    """How many more labelled samples a corrected estimate needs (0: enough)."""
    return max(0, minimum - n_labelled)


def power_tuning(judge_all: np.ndarray, judge_labelled: np.ndarray, people: np.ndarray) -> float:
    """The lam that minimises the estimate's variance, clipped to [0, 1]: the labelled
    samples' covariance of people and judge over the judge's variance (of every score
    the judge gave), inflated by (1 + n/N) for the labelled term's share."""
    n, total = len(people), len(judge_all)
    spread = float(np.var(np.concatenate([judge_labelled, judge_all]), ddof=1))
    if spread <= 0:
        return 0.0  # a judge that says one thing carries no information
    covariance = float(np.mean((people - people.mean()) * (judge_labelled - judge_labelled.mean())))
    return float(np.clip(covariance / ((1 + n / total) * spread), 0.0, 1.0))


def _interval(
    centre: float, std_error: float, bounds: tuple[float, float] = (0.0, 1.0)
) -> tuple[float, float]:
    # a metric lives in [0, 1] (a change of one in [-1, 1]): so does the interval of its mean
    low, high = bounds
    return (max(low, centre - Z95 * std_error), min(high, centre + Z95 * std_error))


def corrected_mean(
    judge_all: Sequence[float],
    judge_labelled: Sequence[float],
    people: Sequence[float],
    lam: float | None = None,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> Corrected:
    """PPI++ estimate of the mean people would give over the samples of `judge_all` (the
    judge's score on every sample, labelled ones included), from `people`'s values on
    the labelled samples and the judge's scores on those same samples, in the same order.
    `lam` None: power-tuned; `bounds`: the values' range (a paired change: (-1, 1)), which
    holds the mean and its intervals. ValueError for fewer than two labelled samples."""
    f_all = np.asarray(judge_all, dtype=np.float64)
    f_lab = np.asarray(judge_labelled, dtype=np.float64)
    y = np.asarray(people, dtype=np.float64)
    n = len(y)
    if n < 2 or len(f_lab) != n or len(f_all) < n:
        raise ValueError(
            f"a corrected mean needs at least two labelled samples, each with the judge's "
            f"score, among all the judge's scores (got {n} labels, {len(f_lab)} labelled "
            f"judge scores, {len(f_all)} judge scores)"
        )
    tuned = power_tuning(f_all, f_lab, y) if lam is None else float(lam)
    rectifier = y - tuned * f_lab
    estimate = float(tuned * f_all.mean() + rectifier.mean())
    variance = tuned**2 * np.var(f_all, ddof=1) / len(f_all) + np.var(rectifier, ddof=1) / n
    labels_only = float(y.mean())
    labels_error = float(np.std(y, ddof=1) / np.sqrt(n))
    return Corrected(
        mean=min(bounds[1], max(bounds[0], estimate)),
        ci95=_interval(estimate, float(np.sqrt(variance)), bounds),
        n_labelled=n,
        judge_mean=float(f_all.mean()),
        labels_only_mean=labels_only,
        labels_only_ci95=_interval(labels_only, labels_error, bounds),
        lam=tuned,
    )
