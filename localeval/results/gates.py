"""Quality gates: a threshold per metric, and what to do when a metric falls below it."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from localeval.errors import UsageError
from localeval.metrics import REGISTRY, spec
from localeval.stats import MetricSummary

#: SPEC.md's default thresholds, as each metric declares them
DEFAULT_THRESHOLDS: dict[str, float] = {
    name: spec.gate for name, spec in REGISTRY.items() if spec.gate is not None
}


def advice(metric: str) -> tuple[str, tuple[str, ...]] | None:
    """The likely cause and the remedies for a metric below its threshold (SPEC.md)."""
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

    def as_dict(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "threshold": self.threshold,
            "value": self.value,
            "passed": self.passed,
        }

    def explanation(self) -> str:
        """One paragraph for a failing gate: metric, value, threshold, cause and remedies."""
        value = "undefined for every sample" if self.value is None else f"{self.value:.3f}"
        text = f"{self.metric} = {value}, below the threshold {self.threshold:.2f}."
        if found := advice(self.metric):
            cause, remedies = found
            text += f" Likely cause: {cause}. Try: {'; '.join(remedies)}."
        return text


def default_thresholds(
    judged: Collection[str], judge_thresholds: Mapping[str, float]
) -> dict[str, float]:
    """SPEC.md's default thresholds, with the judge's own (its models.toml `thresholds`) for
    the metrics in `judged`, the ones that judge scores."""
    thresholds = dict(DEFAULT_THRESHOLDS)
    thresholds.update({m: v for m, v in judge_thresholds.items() if m in judged})
    return thresholds


def parse_threshold(text: str, known_metrics: set[str] | frozenset[str]) -> tuple[str, float]:
    """Parse a METRIC=VALUE override; UsageError on a bad name or a value outside [0, 1]."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep:
        raise UsageError(f"--threshold '{text}': expected METRIC=VALUE, e.g. faithfulness=0.85")
    if name not in known_metrics:
        known = ", ".join(sorted(known_metrics))
        raise UsageError(f"--threshold '{text}': unknown metric '{name}' (known: {known})")
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"--threshold '{text}': '{raw}' is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"--threshold '{text}': the value must be between 0 and 1")
    return name, value


def evaluate_gates(
    summaries: Mapping[str, MetricSummary], thresholds: Mapping[str, float]
) -> list[GateResult]:
    """A gate for each evaluated metric that has a threshold.

    A metric undefined for every sample fails its gate: a gate that passes on no evidence
    would hide a broken dataset.
    """
    results = []
    for metric, summary in summaries.items():
        if metric not in thresholds:
            continue
        threshold = thresholds[metric]
        passed = summary.mean is not None and summary.mean >= threshold
        results.append(GateResult(metric, threshold, summary.mean, passed))
    return results


def check_max_drop(max_drop: float) -> None:
    """The regression gate's tolerance must be a share of the [0, 1] scale."""
    if not 0.0 <= max_drop <= 1.0:
        raise UsageError(f"--max-drop {max_drop:g}: must be between 0 and 1")
