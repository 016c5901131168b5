"""A comparison that stops when it is decided (`evaluate NEW --baseline RUN --until-decided`).

NEW's samples are scored in a seeded random order. After each one, every gated metric's
paired difference (NEW - BASE, in [-1, 1]) updates an anytime-valid confidence sequence
(localeval.sequences) for the mean difference. A metric is decided when its sequence
excludes zero (better or worse) or lies within +-margin (no change that matters); the
comparison stops when every metric is decided. The 5% error is split evenly among the
metrics (Bonferroni), so the chance that any of them is ever wrongly called better or
worse stays at most 5%. A metric that cannot have changed (its inputs are the same in
every pair, scored the same way: localeval.evaluation.decided) is "no change" without a
test: it takes no share of the 5% and never holds the stop back.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.errors import UsageError, param
from localeval.results.view import RunView
from localeval.sequences import BettingSequence

BETTER, WORSE, NO_CHANGE, UNDECIDED = "better", "worse", "no change", "undecided"
#: a mean change smaller than this is "no change" (--margin)
DEFAULT_MARGIN = 0.05
#: the chance, over all gated metrics together, of ever calling a change that is not there
DECISION_ALPHA = 0.05
#: why a metric is decided without a test (`run.until_decided.not_tested`): the fields it
#: reads are the same in every pair, and both runs scored it alike
SAME_INPUTS = "same inputs"
#: the scoring order's seed: the same data is always scored in the same order
ORDER_SEED = 20261203


def check_margin(margin: float) -> None:
    if not (math.isfinite(margin) and 0 < margin < 1):
        raise UsageError(
            f"{param('margin')} must be between 0 and 1 (both excluded), got {margin:g}"
        )


def read_verdict(lower: float, upper: float, margin: float) -> str:
    """The verdict a confidence sequence's bounds give: a change is said when the sequence
    excludes zero, even a small one; "no change" when it lies within +-margin."""
    if lower > 0:
        return BETTER
    if upper < 0:
        return WORSE
    if -margin <= lower and upper <= margin:
        return NO_CHANGE
    return UNDECIDED


def scoring_order(n_rows: int, seed: int = ORDER_SEED) -> list[int]:
    """The data's rows (by position) in the order they are scored: random, but the same for
    the same number of rows, so a stopped comparison continues where it left off."""
    return [int(i) for i in np.random.default_rng(seed).permutation(n_rows)]


@dataclass(frozen=True)
class MetricDecision:
    """One metric's confidence sequence for NEW - BASE, where it stands now."""

    metric: str
    n_paired: int
    change: float | None
    lower: float
    upper: float
    verdict: str


class SequentialComparison:
    """NEW's samples, as they are scored, against BASE's scores of the same samples."""

    def __init__(
        self,
        baseline: RunView,
        metrics: Sequence[str],
        margin: float = DEFAULT_MARGIN,
        alpha: float = DECISION_ALPHA,
    ):
        check_margin(margin)
        if not metrics:
            raise UsageError(
                f"{param('until_decided')} needs a gated metric that the {param('baseline')} run "
                "holds"
            )
        self.metrics = list(metrics)
        self.margin = margin
        self.alpha = alpha
        ids = baseline.columns.sample_ids
        self.base: dict[str, dict[str, float]] = {
            m: {i: float(s) for i, s in zip(ids, baseline.columns.scores[m], strict=True)}
            for m in self.metrics
        }
        self.scored = 0
        self.leave_untested({})

    def leave_untested(self, reasons: Mapping[str, str]) -> None:
        """Decide these metrics "no change" without a test (why: SAME_INPUTS), before any
        sample is observed; the 5% is split over the others, the only ones tested."""
        if self.scored:
            raise RuntimeError("metrics are left untested before any sample is observed")
        self.not_tested = {m: reasons[m] for m in self.metrics if m in reasons}
        tested = [m for m in self.metrics if m not in self.not_tested]
        self.alpha_each = self.alpha / max(1, len(tested))
        self.sequences = {m: BettingSequence(self.alpha_each, -1.0, 1.0) for m in tested}
        self.totals = dict.fromkeys(tested, 0.0)

    def pairs_with(self, sample_ids: Collection[str]) -> set[str]:
        """Which of these samples BASE holds a score of a decided metric for."""
        held = {i for scores in self.base.values() for i, s in scores.items() if s == s}
        return held & set(sample_ids)

    def observe(self, sample_id: str, scores: Mapping[str, float | None]) -> None:
        """One more of NEW's samples; a metric undefined on either side is not updated."""
        self.scored += 1
        for metric, sequence in self.sequences.items():
            base, new = self.base[metric].get(sample_id), scores.get(metric)
            if base is None or new is None or math.isnan(base) or math.isnan(new):
                continue
            sequence.update(new - base)
            self.totals[metric] += new - base

    def decisions(self) -> list[MetricDecision]:
        """Where each tested metric's sequence stands (the untested ones have none)."""
        out = []
        for metric, sequence in self.sequences.items():
            lower, upper = sequence.bounds()
            n = sequence.n
            change = self.totals[metric] / n if n else None
            verdict = read_verdict(lower, upper, self.margin)
            out.append(MetricDecision(metric, n, change, lower, upper, verdict))
        return out

    def decided(self) -> bool:
        return all(d.verdict != UNDECIDED for d in self.decisions())

    def report(self, samples_total: int) -> dict[str, Any]:
        """results.json's `run.until_decided`."""
        decisions = {d.metric: d for d in self.decisions()}
        return {
            "samples_scored": self.scored,
            "samples_total": samples_total,
            "verdicts": {
                m: NO_CHANGE if m in self.not_tested else decisions[m].verdict for m in self.metrics
            },
            "margin": self.margin,
            "alpha_per_metric": self.alpha_each,
            "metrics": {
                d.metric: {
                    "n_paired": d.n_paired,
                    "change": d.change,
                    "confidence_sequence": [d.lower, d.upper],
                }
                for d in decisions.values()
            },
            "not_tested": dict(self.not_tested),
        }
