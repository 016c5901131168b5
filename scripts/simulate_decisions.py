"""How often `evaluate --until-decided` is wrong, and how many samples it needs: a
simulation with no model (docs/decisions.md, docs/usage.md).

Each simulated comparison holds N paired samples drawn i.i.d.: a baseline score from a
faithfulness-like distribution (62% 1.0, 13% 0.0, 25% partial: 1/4, 1/3, 1/2, 2/3, 3/4
of the statements supported), and NEW's score of the same sample, which is the baseline's
with probability SAME (the new answer got the same verdicts) and otherwise a fresh draw
from NEW's distribution: the baseline's, with a share of its mass moved to 1.0 so that the
mean paired difference is exactly the change simulated. The samples are scored in random
order (they are i.i.d.), and after each one the rule looks.

    PYTHONPATH=$PWD .venv/bin/python scripts/simulate_decisions.py --runs 1000 --samples 500
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from localeval.results.decision import BETTER, NO_CHANGE, UNDECIDED, WORSE, read_verdict
from localeval.sequences import BettingSequence

PARTIAL = np.array([0.25, 1 / 3, 0.5, 2 / 3, 0.75])
P_ONE, P_ZERO = 0.62, 0.13
SAME = 0.4
#: the naive rule looks from this many samples on (a bootstrap of 1 or 2 values is no interval)
NAIVE_FROM = 10
NAIVE_RESAMPLES = 400


def faithfulness_like(rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
    kind = rng.random(size)
    partial = PARTIAL[rng.integers(0, PARTIAL.size, size)]
    return np.where(kind < P_ONE, 1.0, np.where(kind < P_ONE + P_ZERO, 0.0, partial))


def paired_differences(
    rng: np.random.Generator, runs: int, samples: int, change: float
) -> np.ndarray:
    """NEW - BASE for `runs` comparisons of `samples` samples, mean difference `change`."""
    base = faithfulness_like(rng, (runs, samples))
    mean = P_ONE + (1 - P_ONE - P_ZERO) * PARTIAL.mean()
    # NEW's fresh draws: to 1.0 with probability `moved`, else like the baseline's
    moved = change / ((1 - SAME) * (1 - mean))
    fresh = np.where(rng.random(base.shape) < moved, 1.0, faithfulness_like(rng, base.shape))
    new = np.where(rng.random(base.shape) < SAME, base, fresh)
    return new - base


def sequential(
    differences: np.ndarray, alpha: float, margin: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each run's verdict and the samples it needed (N where the data's end stopped it)."""
    runs, samples = differences.shape
    sequence = BettingSequence(alpha, -1.0, 1.0, shape=(runs,))
    verdict = np.full(runs, UNDECIDED, dtype=object)
    needed = np.full(runs, samples)
    for t in range(samples):
        sequence.update(differences[:, t])
        lower, upper = sequence.interval()
        for r in np.flatnonzero(verdict == UNDECIDED):
            said = read_verdict(float(lower[r]), float(upper[r]), margin)
            if said != UNDECIDED:
                verdict[r], needed[r] = said, t + 1
    return verdict, needed


def naive_bootstrap(differences: np.ndarray, seed: int) -> np.ndarray:
    """Whether each run's fixed-sample 95% bootstrap interval, looked at after every sample,
    ever excludes zero (the Poisson bootstrap: each resample's weight of a sample is
    Poisson(1), which updates one sample at a time)."""
    rng = np.random.default_rng(seed)
    runs, samples = differences.shape
    sums = np.zeros((runs, NAIVE_RESAMPLES))
    counts = np.zeros((runs, NAIVE_RESAMPLES))
    declared = np.zeros(runs, dtype=bool)
    for t in range(samples):
        weights = rng.poisson(1.0, (runs, NAIVE_RESAMPLES))
        sums += weights * differences[:, t : t + 1]
        counts += weights
        if t + 1 < NAIVE_FROM:
            continue
        means = sums / np.maximum(counts, 1)
        low, high = np.percentile(means, [2.5, 97.5], axis=1)
        declared |= (low > 0) | (high < 0)
    return declared


def scenario(
    rng: np.random.Generator, runs: int, samples: int, change: float, alpha: float, margin: float
) -> dict[str, object]:
    differences = paired_differences(rng, runs, samples, change)
    verdict, needed = sequential(differences, alpha, margin)
    right = BETTER if change > 0 else NO_CHANGE
    decided = verdict != UNDECIDED
    row: dict[str, object] = {
        "change": change,
        "alpha_per_metric": alpha,
        "margin": margin,
        "runs": runs,
        "samples": samples,
        "sd_difference": round(float(differences.std()), 3),
        "wrong_better_or_worse": float(np.mean((verdict == WORSE) | (verdict == BETTER)))
        if change == 0
        else float(np.mean(verdict == WORSE)),
        "verdicts": {v: int(np.sum(verdict == v)) for v in (BETTER, WORSE, NO_CHANGE, UNDECIDED)},
        "right": float(np.mean(verdict == right)),
        "decided_before_end": float(np.mean(decided & (needed < samples))),
        "median_share_needed": float(np.median(needed) / samples),
        "p90_share_needed": float(np.percentile(needed, 90) / samples),
    }
    if change == 0:
        row["naive_bootstrap_wrong"] = float(naive_bootstrap(differences, 7).mean())
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--changes", type=float, nargs="*", default=[0.0, 0.05, 0.10])
    parser.add_argument("--metrics", type=int, nargs="*", default=[1, 4])
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    for metrics in args.metrics:
        for change in args.changes:
            started = time.monotonic()
            row = scenario(rng, args.runs, args.samples, change, 0.05 / metrics, args.margin)
            row["metrics_sharing_alpha"] = metrics
            row["seconds"] = round(time.monotonic() - started, 1)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
