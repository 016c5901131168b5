"""Calibration maps: from a judge's raw yes-probability to the probability a person agrees.

A small judge's P(Yes) is compressed into a narrow band (0.4-0.75 for a 0.5B model) and
sits at a different place for every judge, so a gate of 0.80 means nothing on it. A map
fitted on labelled rows turns each verdict into "the probability that a person would say
yes", so a score reads as the expected share of supported statements and the default gates
apply to every calibrated judge alike.

The map is logistic on the logit, p' = sigmoid(a * logit(p) + b): monotone, so it never
changes which of two verdicts ranks higher, and two numbers are enough to store, read and
check. It is fitted so that each labelled row's score (the mean of its mapped verdicts)
matches the row's label: rows with several statements and graded labels count as well as
single-verdict rows. docs/decisions.md records why this form was chosen over isotonic.
`localeval calibrate --fit` fits the maps; a judge's models.toml entry stores them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: the kinds of verdict a map is fitted for: the question each one answers
KINDS = {
    "supported": "does the context state this statement? (faithfulness, context recall)",
    "answers": "does the answer answer the question? (answer relevancy)",
    "useful": "is this chunk useful for the reference? (context precision)",
}
_EPS = 1e-6
#: weight of the pull towards p' = p, as many rows' worth of cross-entropy
PRIOR = 0.1


def logit(p: float | np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=np.float64), _EPS, 1 - _EPS)
    return np.log(q / (1 - q))


def sigmoid(z: float | np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


@dataclass(frozen=True)
class ReliabilityBin:
    """One bar of a reliability diagram: scores in [low, high), their mean, the mean label."""

    low: float
    high: float
    n: int
    mean_score: float
    mean_label: float


@dataclass(frozen=True)
class VerdictMap:
    """p' = sigmoid(a * logit(p) + b) for one kind of verdict of one judge."""

    kind: str
    a: float
    b: float
    #: what it was fitted on, in words ("halueval_qa (200 rows), wice (70 rows)")
    fitted_on: str = ""
    #: expected calibration error measured on datasets left out of the fit
    ece: float | None = None
    #: the reliability diagram of that measurement: (low, high, n, mean score, mean label)
    reliability: tuple[tuple[float, float, int, float, float], ...] = ()

    def apply(self, probability: float) -> float:
        return float(sigmoid(self.a * logit(probability) + self.b))

    def bins(self) -> list[ReliabilityBin]:
        return [ReliabilityBin(*row) for row in self.reliability]

    def record(self) -> dict[str, object]:
        """As a run records it (and models.toml stores it)."""
        data: dict[str, object] = {"a": round(self.a, 4), "b": round(self.b, 4)}
        if self.fitted_on:
            data["fitted_on"] = self.fitted_on
        if self.ece is not None:
            data["ece"] = round(self.ece, 4)
        if self.reliability:
            data["reliability"] = [list(row) for row in self.reliability]
        return data


def fit_map(
    kind: str,
    rows: Sequence[tuple[Sequence[float], float]],
    fitted_on: str = "",
    steps: int = 200,
) -> VerdictMap:
    """Fit a and b by Newton's method on the cross-entropy between each row's label (in
    [0, 1]) and the mean of its mapped verdicts. `rows`: (raw verdicts, label)."""
    usable = [(np.asarray(p, dtype=np.float64), float(y)) for p, y in rows if len(p)]
    if len(usable) < 2 or len({y for _, y in usable}) < 2:
        raise ValueError(f"fitting a '{kind}' map needs rows with at least two different labels")
    z = np.concatenate([logit(p) for p, _ in usable])
    row = np.concatenate([np.full(len(p), i) for i, (p, _) in enumerate(usable)])
    count = np.bincount(row).astype(np.float64)
    y = np.array([label for _, label in usable])
    w = start = np.array([1.0, 0.0])
    for _ in range(steps):
        gradient, hessian = _loss_derivatives(w, z, row, count, y)
        # a weak pull towards the identity map keeps a and b finite where the labelled rows
        # separate perfectly (the unpenalised fit then runs off to a -> infinity)
        pull = PRIOR / len(usable)
        gradient = gradient + pull * (w - start)
        step = np.linalg.solve(hessian + pull * np.eye(2), gradient)
        w = w - step
        if float(np.abs(step).max()) < 1e-9:
            break
    return VerdictMap(kind, float(w[0]), float(w[1]), fitted_on)


def with_measurement(fitted: VerdictMap, ece: float, bins: Sequence[ReliabilityBin]) -> VerdictMap:
    """The map with what was measured of it on rows it was not fitted on."""
    rows = tuple((b.low, b.high, b.n, round(b.mean_score, 4), round(b.mean_label, 4)) for b in bins)
    return VerdictMap(fitted.kind, fitted.a, fitted.b, fitted.fitted_on, ece, rows)


def _loss_derivatives(
    w: np.ndarray, z: np.ndarray, row: np.ndarray, count: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Gauss-Newton Hessian of the mean cross-entropy in (a, b)."""
    q = sigmoid(w[0] * z + w[1])
    dq = q * (1 - q)
    mean = np.clip(np.bincount(row, q) / count, _EPS, 1 - _EPS)
    # d mean / d a and d mean / d b, per row
    da = np.bincount(row, dq * z) / count
    db = np.bincount(row, dq) / count
    residual = (mean - y) / (mean * (1 - mean))
    gradient = np.array([np.mean(residual * da), np.mean(residual * db)])
    weight = 1.0 / (mean * (1 - mean))
    jac = np.stack([da, db], axis=1)
    hessian = (jac * weight[:, None]).T @ jac / len(y)
    return gradient, hessian


def expected_calibration_error(
    scores: Sequence[float],
    labels: Sequence[float],
    bins: int = 10,
    weights: np.ndarray | None = None,
) -> float:
    """Mean |mean score - mean label| over equal-width score bins, weighted by their size
    (each row counted `weights` times: a bootstrap resample as counts, see stats)."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if not s.size:
        return math.nan
    w = np.ones(s.size) if weights is None else np.asarray(weights, dtype=np.float64)
    which = np.minimum((s * bins).astype(int), bins - 1)
    size = np.bincount(which, weights=w, minlength=bins)
    held = size > 0
    score_sum = np.bincount(which, weights=w * s, minlength=bins)[held]
    label_sum = np.bincount(which, weights=w * y, minlength=bins)[held]
    gaps = np.abs(score_sum - label_sum) / size[held]
    return float((size[held] / size.sum() * gaps).sum())


def reliability(
    scores: Sequence[float], labels: Sequence[float], bins: int = 10
) -> list[ReliabilityBin]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    which = np.minimum((s * bins).astype(int), bins - 1)
    found = []
    for b in range(bins):
        members = which == b
        if members.any():
            found.append(
                ReliabilityBin(
                    b / bins,
                    (b + 1) / bins,
                    int(members.sum()),
                    float(s[members].mean()),
                    float(y[members].mean()),
                )
            )
    return found
