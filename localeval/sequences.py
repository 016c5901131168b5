"""Anytime-valid confidence sequences for the mean of bounded values, by betting.

A fixed-sample interval (stats.bootstrap_ci) holds its 95% only when it is looked at once,
at a sample size chosen in advance; looked at after every sample, it excludes the true mean
at some point far more often than 5%. A confidence sequence holds at every sample size at
once: the chance that it ever excludes the true mean is at most alpha, so a comparison may
stop as soon as it is decided.

Written against Waudby-Smith & Ramdas (2023), "Estimating means of bounded random variables
by betting", JRSS-B 86(1): the hedged capital process with predictable plug-in bets
(their Theorem 3 and eq. 26-27), over a grid of candidate means, with the running
intersection. Values are i.i.d. draws (the samples scored in a random order); the mean is
the population's, not only that of the samples in the file. docs/decisions.md says why this
and not a library's, with the simulation.
"""

from __future__ import annotations

import math

import numpy as np

#: candidate means on the unit scale; the interval is rounded outwards to this grid
GRID_POINTS = 2001
#: the largest bet, as a share of what a candidate mean allows (WSR's c = 1/2)
MAX_BET = 0.5


class BettingSequence:
    """A 1 - `alpha` confidence sequence for the mean of values in [`low`, `high`].

    `update` takes one value per sequence: a float, or an array of shape `shape` (many
    independent sequences at once, for simulations). `interval()` is the current one."""

    def __init__(
        self,
        alpha: float = 0.05,
        low: float = 0.0,
        high: float = 1.0,
        shape: tuple[int, ...] = (),
    ):
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
        self.alpha, self.low, self.high = alpha, low, high
        self.means = np.linspace(0.0, 1.0, GRID_POINTS)
        # the largest bet each candidate mean allows, against it (+) and for it (-)
        with np.errstate(divide="ignore"):
            self.cap_up = MAX_BET / self.means
            self.cap_down = MAX_BET / (1.0 - self.means)
        self.log_up = np.zeros((*shape, GRID_POINTS))
        self.log_down = np.zeros((*shape, GRID_POINTS))
        self.n = 0
        self.total = np.zeros(shape)
        # sum of squared errors of the running mean, started at 1/4 (WSR's sigma-hat)
        self.squares = np.full(shape, 0.25)
        self.lower = np.zeros(shape)
        self.upper = np.ones(shape)

    def update(self, values: float | np.ndarray) -> None:
        """One more value per sequence."""
        unit = (np.asarray(values, dtype=float) - self.low) / (self.high - self.low)
        unit = np.clip(unit, 0.0, 1.0)  # rounding only: values are checked by the caller
        t = self.n + 1
        variance = self.squares / t  # sigma-hat squared of the values before this one
        bet = np.sqrt(2.0 * math.log(2.0 / self.alpha) / (variance * t * math.log1p(t)))
        bet = bet[..., None]
        gain = unit[..., None] - self.means
        self.log_up += np.log1p(np.minimum(bet, self.cap_up) * gain)
        self.log_down += np.log1p(-np.minimum(bet, self.cap_down) * gain)
        self.total = self.total + unit
        running_mean = (0.5 + self.total) / (t + 1)
        self.squares = self.squares + (unit - running_mean) ** 2
        self.n = t
        self._narrow()

    def _narrow(self) -> None:
        """The candidate means whose hedged capital is below 1/alpha stay; the bounds are
        the grid points just outside them, intersected with every earlier interval."""
        # max(K+/2, K-/2) < 1/alpha
        kept = np.maximum(self.log_up, self.log_down) < math.log(2.0 / self.alpha)
        last = GRID_POINTS - 1
        first_kept = np.argmax(kept, axis=-1)
        last_kept = last - np.argmax(kept[..., ::-1], axis=-1)
        lower = self.means[np.maximum(first_kept - 1, 0)]
        upper = self.means[np.minimum(last_kept + 1, last)]
        # no candidate kept (chance at most alpha): the sequence stays where it was
        empty = ~kept.any(axis=-1)
        self.lower = np.where(empty, self.lower, np.maximum(self.lower, lower))
        self.upper = np.where(empty, self.upper, np.minimum(self.upper, upper))
        crossed = self.lower > self.upper
        middle = (self.lower + self.upper) / 2
        self.lower = np.where(crossed, middle, self.lower)
        self.upper = np.where(crossed, middle, self.upper)

    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """The current bounds on the values' own scale (arrays of shape `shape`)."""
        width = self.high - self.low
        return self.low + width * self.lower, self.low + width * self.upper

    def bounds(self) -> tuple[float, float]:
        """The current bounds of a single sequence (shape ())."""
        lower, upper = self.interval()
        return float(lower), float(upper)
