"""Quality gates: a threshold per metric, and what to do when a metric falls below it.

A gate reads a mean only where it is evidence: when fewer than `min_defined` of the
samples have a score for the metric (the rest undefined: a missing field, no statements),
the gate fails and says so, whatever the mean of the few.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from localeval.errors import UsageError, param
from localeval.metrics import REGISTRY, OnFirstUse, spec
from localeval.results.corrected import CorrectedSummary
from localeval.stats import MetricSummary


def _declared_gates() -> dict[str, float]:
    return {name: spec.gate for name, spec in REGISTRY.items() if spec.gate is not None}


#: each metric's default threshold (docs/reference.md, "Quality gates"), as it declares it
#: (MetricSpec.gate), read from the registry when first asked
DEFAULT_THRESHOLDS: Mapping[str, float] = OnFirstUse(_declared_gates)
#: the share of a run's samples that must have a score for a metric before its gate can pass:
#: a mean over fewer than half the samples says more about which rows were scorable than
#: about the system (`evaluate --min-defined`)
DEFAULT_MIN_DEFINED = 0.5
#: which mean a gate reads (`evaluate --gate-on`): the judge's; the one corrected by
#: people's labels; or that one where the run has enough labels, else the judge's
JUDGE, CORRECTED, AUTO = "judge", "corrected", "auto"
GATE_ON = (JUDGE, CORRECTED, AUTO)


def advice(metric: str) -> tuple[str, tuple[str, ...]] | None:
    """The likely cause and the remedies for a metric below its threshold (its spec's)."""
    found = spec(metric)
    if found is None or found.cause is None:
        return None
    return found.cause, found.remedies


@dataclass(frozen=True)
class GateResult:
    """One gate: a metric's mean against its threshold."""

    metric: str
    threshold: float
    value: float | None
    passed: bool
    #: samples with a score and without one (None for gates recorded before these were)
    n_defined: int | None = None
    n_undefined: int | None = None
    #: the share of defined samples the gate needed
    min_defined: float | None = None
    #: what the gate read: JUDGE (the judge's mean) or CORRECTED (the mean corrected by
    #: people's labels, whose 95% interval is `interval`); `needed`: the labelled samples
    #: still needed where --gate-on corrected found too few
    reads: str = JUDGE
    interval: tuple[float, float] | None = None
    needed: int | None = None
    #: which mean the gate was asked to read (GATE_ON): kept so that `runs show` reads the
    #: gate again, as the labels made since give it, the way it was asked
    gate_on: str = AUTO

    @property
    def straddles(self) -> bool:
        """Whether the corrected mean's interval holds the threshold: the gate's side of it
        is not settled by the labels so far."""
        return self.interval is not None and self.interval[0] < self.threshold <= self.interval[1]

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> GateResult:
        """A gate as results.json and the run history hold it (older ones lack counts)."""
        return cls(
            entry["metric"],
            entry["threshold"],
            entry["value"],
            entry["passed"],
            entry.get("n_defined"),
            entry.get("n_undefined"),
            entry.get("min_defined"),
            entry.get("reads", JUDGE),
            _interval(entry.get("ci95")),
            entry.get("labels_needed"),
            entry.get("gate_on", AUTO),
        )

    def as_dict(self) -> dict[str, object]:
        entry: dict[str, object] = {
            "metric": self.metric,
            "threshold": self.threshold,
            "value": self.value,
            "passed": self.passed,
        }
        if self.reads != JUDGE:
            interval = None if self.interval is None else list(self.interval)  # as JSON has it
            entry.update(reads=self.reads, ci95=interval, interval_straddles=self.straddles)
        if self.gate_on != AUTO:
            entry.update(gate_on=self.gate_on)
        if self.needed:
            entry.update(labels_needed=self.needed, reason=self.title())
        if self.too_few_defined:  # the counts are the reason: kept with it
            entry.update(
                n_defined=self.n_defined,
                n_undefined=self.n_undefined,
                min_defined=self.min_defined,
                reason=self.title(),
            )
        return entry

    @property
    def too_few_defined(self) -> bool:
        """Failed because too few samples have a score, whatever their mean."""
        if self.n_defined is None or self.n_undefined is None or self.min_defined is None:
            return False
        total = self.n_defined + self.n_undefined
        return self.value is not None and total > 0 and self.n_defined < self.min_defined * total

    def line(self) -> str:
        """The gate in one line, as every output says it: the mean it read, which mean that
        was where it is not the judge's, against the threshold; for a failing gate, why."""
        if not self.passed or self.value is None:
            return self.title()
        return f"{self.metric} = {self.value:.3f}{self.read_as()} >= {self.threshold:.2f}"

    def title(self) -> str:
        """One line: why the gate failed (a passing gate's line is `line`)."""
        if self.needed:
            return f"{self.metric}: {self.labels_wanted()}"
        if self.value is None:
            return (
                f"{self.metric} = undefined for every sample, below the threshold "
                f"{self.threshold:.2f}"
            )
        if self.too_few_defined:
            total = (self.n_defined or 0) + (self.n_undefined or 0)
            return (
                f"{self.metric} = {self.value:.3f} from only {self.n_defined} of {total} "
                f"samples ({self.n_undefined} undefined): a gate needs at least "
                f"{self.min_defined:.0%} of the samples scored (--min-defined)"
            )
        return (
            f"{self.metric} = {self.value:.3f}{self.read_as()}, below the threshold "
            f"{self.threshold:.2f}"
        )

    def labels_wanted(self) -> str:
        """Why a gate on the corrected mean had none to read."""
        return (
            "no mean corrected by people's labels to gate on (--gate-on corrected): label "
            f"{self.needed} more samples at random"
        )

    def read_as(self) -> str:
        """What the value is, when it is not the judge's mean: " (corrected by people's
        labels, 95% CI [a, b], which holds the threshold)"."""
        if self.reads != CORRECTED or self.interval is None:
            return ""
        low, high = self.interval
        holds = "holds the threshold" if self.straddles else "clear of the threshold"
        return f" (corrected by people's labels, 95% CI [{low:.3f}, {high:.3f}], {holds})"

    def explanation(self) -> str:
        """One paragraph: for a failing gate its metric, value, threshold, cause and
        remedies; for a passing one, its line."""
        if self.passed:
            return f"{self.line()}."
        if self.too_few_defined:
            return (
                f"{self.title()}. The mean of so few is no evidence; each undefined sample's "
                "undefined_reason in results.json says what it lacks."
            )
        text = f"{self.title()}."
        if found := advice(self.metric):
            cause, remedies = found
            text += f" Likely cause: {cause}. Try: {'; '.join(remedies)}."
        return text


def default_thresholds(
    judged: Collection[str], judge_thresholds: Mapping[str, float]
) -> dict[str, float]:
    """The default thresholds (docs/reference.md), with the judge's own (its models.toml
    `thresholds`) for the metrics in `judged`, the ones that judge scores."""
    thresholds = dict(DEFAULT_THRESHOLDS)
    thresholds.update({m: v for m, v in judge_thresholds.items() if m in judged})
    return thresholds


@dataclass(frozen=True)
class GatePlan:
    """The thresholds a run is gated by, one per metric of the run that has one, and the
    metrics whose threshold is the judge's own (models.toml) rather than the default."""

    thresholds: dict[str, float]
    from_judge: list[str]


def plan_gates(
    metrics: Sequence[str],
    judged: Collection[str],
    judge_thresholds: Mapping[str, float],
    overrides: Mapping[str, float],
) -> GatePlan:
    """The gates of a run of `metrics`, for the command line, the Python API and the pytest
    fixture alike: the metrics' defaults, the judge's own for the metrics it scores
    (`judged`, those on the judge's scale), and the given `overrides` over both."""
    defaults = default_thresholds(judged, judge_thresholds) | dict(overrides)
    # only the metrics of the run are gated, and only theirs are recorded and shown
    thresholds = {m: v for m, v in defaults.items() if m in metrics}
    from_judge = sorted(m for m in set(judged) & set(judge_thresholds) if m not in overrides)
    return GatePlan(thresholds, from_judge)


def check_threshold_values(
    given: Mapping[str, object], metrics: Sequence[str], known: Collection[str]
) -> dict[str, float]:
    """Thresholds given in code (metric -> minimum mean), checked: each a known metric of
    this run (`metrics`), each a number from 0 to 1."""
    checked: dict[str, float] = {}
    for metric, value in given.items():
        if metric not in known:
            raise UsageError(
                f"thresholds: unknown metric '{metric}' (known: {', '.join(sorted(known))})"
            )
        if metric not in metrics:
            raise UsageError(
                f"thresholds: '{metric}' is not among the metrics evaluated ({', '.join(metrics)})"
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise UsageError(f"thresholds: '{metric}' must be a number between 0 and 1")
        checked[metric] = float(value)
    return checked


def parse_threshold(text: str, known_metrics: set[str] | frozenset[str]) -> tuple[str, float]:
    """Parse a METRIC=VALUE override; UsageError on a bad name or a value outside [0, 1]."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep:
        raise UsageError(
            f"{param('thresholds')} '{text}': expected METRIC=VALUE, e.g. faithfulness=0.85"
        )
    if name not in known_metrics:
        known = ", ".join(sorted(known_metrics))
        raise UsageError(
            f"{param('thresholds')} '{text}': unknown metric '{name}' (known: {known})"
        )
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{param('thresholds')} '{text}': '{raw}' is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"{param('thresholds')} '{text}': the value must be between 0 and 1")
    return name, value


def parse_thresholds(
    texts: Sequence[str], known_metrics: set[str] | frozenset[str]
) -> dict[str, float]:
    """Each METRIC=VALUE override (parse_threshold); UsageError for a metric given twice,
    where the last would otherwise silently win."""
    given: dict[str, str] = {}
    overrides: dict[str, float] = {}
    for text in texts:
        name, value = parse_threshold(text, known_metrics)
        if name in given:
            raise UsageError(
                f"{param('thresholds')} '{given[name]}' and {param('thresholds')} '{text}' both "
                "set the gate of "
                f"{name}; give it once"
            )
        given[name], overrides[name] = text, value
    return overrides


def evaluate_gates(
    summaries: Mapping[str, MetricSummary],
    thresholds: Mapping[str, float],
    min_defined: float = DEFAULT_MIN_DEFINED,
    corrected: Mapping[str, CorrectedSummary] | None = None,
    gate_on: str = AUTO,
) -> list[GateResult]:
    """A gate for each evaluated metric that has a threshold.

    A metric with a score for fewer than `min_defined` of the samples fails its gate (and
    one undefined for every sample always does): a gate that passes on no evidence would
    hide a broken dataset. `gate_on` (GATE_ON) says which mean a gate reads of a metric
    with a corrected summary in `corrected`: AUTO the corrected mean where there are enough
    labels, else the judge's; CORRECTED only the corrected one (too few labels fail the
    gate, saying how many more); JUDGE always the judge's.
    """
    results = []
    for metric, summary in summaries.items():
        if metric not in thresholds:
            continue
        threshold = thresholds[metric]
        enough = summary.n >= min_defined * (summary.n + summary.n_undefined)
        counts = (summary.n, summary.n_undefined, min_defined)
        entry = (corrected or {}).get(metric) if gate_on != JUDGE else None
        found = entry.estimate if entry is not None else None
        value: float | None
        if found is not None:
            value, passed = found.mean, enough and found.mean >= threshold
            read: tuple[str, tuple[float, float] | None, int | None] = (CORRECTED, found.ci95, None)
        elif entry is not None and gate_on == CORRECTED:
            value, passed, read = None, False, (CORRECTED, None, entry.needed)
        else:
            value, read = summary.mean, (JUDGE, None, None)
            passed = summary.mean is not None and enough and summary.mean >= threshold
        results.append(GateResult(metric, threshold, value, passed, *counts, *read, gate_on))
    return results


def gates_now(
    recorded: Sequence[GateResult],
    summaries: Mapping[str, MetricSummary],
    corrected: Mapping[str, CorrectedSummary],
) -> list[GateResult]:
    """A finished run's recorded gates read again (evaluate_gates) with the corrected means
    its labels give now, made or carried over since: each with the threshold and --gate-on
    it was recorded with. The judge's scores have not changed, so neither has the count
    check: its share is kept where it failed the gate, and is 0 (passed, as then) where not."""
    found: list[GateResult] = []
    for gate in recorded:
        summary = summaries.get(gate.metric)
        if summary is None:  # a gate of a metric the run no longer summarises: as recorded
            found.append(gate)
            continue
        share = (gate.min_defined or 0.0) if gate.too_few_defined else 0.0
        threshold = {gate.metric: gate.threshold}
        again = evaluate_gates({gate.metric: summary}, threshold, share, corrected, gate.gate_on)
        # the count check as recorded: the same scores, and the same gate as results.json's
        counts = {"n_defined": gate.n_defined, "n_undefined": gate.n_undefined}
        found += [replace(read, **counts, min_defined=gate.min_defined) for read in again]
    return found


def check_overrides(
    given: Sequence[str] | Mapping[str, object], metrics: Sequence[str], known: Collection[str]
) -> dict[str, float]:
    """The gates given for a run of `metrics`: --threshold METRIC=VALUE texts, or a mapping
    given in code (the Python API), each checked with the messages of its kind."""
    if isinstance(given, Mapping):
        return check_threshold_values(given, metrics, known)
    overrides = parse_thresholds(given, frozenset(known))
    check_thresholds_run(overrides, metrics)
    return overrides


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        return float(value[0]), float(value[1])
    return None


def check_gate_on(gate_on: str) -> None:
    if gate_on not in GATE_ON:
        raise UsageError(f"{param('gate_on')} {gate_on}: one of {', '.join(GATE_ON)}")


def check_min_defined(share: float) -> None:
    """The share of defined samples a gate needs must be a share."""
    if not 0.0 <= share <= 1.0:
        raise UsageError(f"{param('min_defined')} {share:g}: must be between 0 and 1")


def check_thresholds_run(overrides: Mapping[str, float], metrics: Collection[str]) -> None:
    """A --threshold for a metric that is not computed would gate nothing, silently."""
    for metric, value in overrides.items():
        if metric not in metrics:
            raise UsageError(
                f"{param('thresholds')} {metric}={value:g}: {metric} is not among the metrics of "
                "this run "
                f"({', '.join(metrics)}); add -m {metric}, or leave the threshold out"
            )


def check_max_drop(max_drop: float) -> None:
    """The regression gate's tolerance must be a share of the [0, 1] scale."""
    if not 0.0 <= max_drop <= 1.0:
        raise UsageError(f"{param('max_drop')} {max_drop:g}: must be between 0 and 1")
