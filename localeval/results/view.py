"""Reading a results dict for the report renderers: the metrics, gates and worst samples.

A results file may come from another machine or an older version, so every value is
checked for its type here and anything unexpected is treated as missing, never trusted.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from localeval.metrics import spec
from localeval.metrics.base import Evidence
from localeval.metrics.explain import number, text
from localeval.results.gates import GateResult
from localeval.results.summary import NO_CATEGORY, ScoreColumns
from localeval.verdict_maps import ReliabilityBin


def item(values: Any, index: int) -> Any:
    """values[index] when values is a list long enough, else None."""
    return values[index] if isinstance(values, list) and 0 <= index < len(values) else None


def fmt(value: Any, digits: int = 3) -> str:
    """A score for display: 3 decimals, or '-' when there is none."""
    x = number(value)
    return "-" if x is None else f"{x:.{digits}f}"


def reliability_bins(rows: Any) -> list[ReliabilityBin]:
    """A recorded reliability diagram ([low, high, n, mean score, mean label] rows), keeping
    only well-formed rows of numbers in [0, 1] (a results file may be hand-edited)."""
    found = []
    for row in rows if isinstance(rows, list) else []:
        if not (isinstance(row, list) and len(row) == 5):
            continue
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in row):
            continue
        low, high, n, score, label = row
        if all(math.isfinite(v) and 0 <= v <= 1 for v in (low, high, score, label)) and n > 0:
            found.append(ReliabilityBin(low, high, int(n), score, label))
    return found


def metric_names(results: Mapping[str, Any]) -> list[str]:
    """The run's metrics in its order; the summary's keys for a file without run.metrics."""
    listed = results.get("run", {}).get("metrics")
    if isinstance(listed, list) and all(isinstance(m, str) for m in listed):
        return list(listed)
    return [str(m) for m in results.get("summary", {})]


def metric_settings(results: Mapping[str, Any]) -> Mapping[str, Any]:
    """The run's settings per metric ({} for a file without them)."""
    settings = results.get("run", {}).get("metric_settings")
    return settings if isinstance(settings, Mapping) else {}


def sample_details(results: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Each sample's details ({metric: details}), skipping what is not one."""
    samples = results.get("samples")
    for sample in samples if isinstance(samples, list) else []:
        details = sample.get("details") if isinstance(sample, Mapping) else None
        if isinstance(details, Mapping):
            yield details


def gate_results(results: Mapping[str, Any]) -> list[GateResult]:
    gates = []
    for gate in results.get("gates", []):
        threshold = number(gate.get("threshold"))
        if threshold is None:
            continue
        gates.append(
            GateResult(
                text(gate.get("metric")),
                threshold,
                number(gate.get("value")),
                gate.get("passed") is True,
                _count(gate.get("n_defined")),
                _count(gate.get("n_undefined")),
                number(gate.get("min_defined")),
            )
        )
    return gates


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def thresholds(results: Mapping[str, Any]) -> dict[str, float]:
    return {g.metric: g.threshold for g in gate_results(results)}


def summary_mean(results: Mapping[str, Any] | None, metric: str) -> float | None:
    if results is None:
        return None
    entry = results.get("summary", {}).get(metric)
    return number(entry.get("mean")) if isinstance(entry, dict) else None


def category_summaries(results: Mapping[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per category, per metric: mean, n, n_undefined, ci95. Taken from the file's
    summary_by_category, or computed from the samples' scores when the file has none."""
    given = results.get("summary_by_category")
    if isinstance(given, dict) and all(isinstance(v, dict) for v in given.values()):
        return {
            str(category): {str(m): s for m, s in metrics.items() if isinstance(s, dict)}
            for category, metrics in given.items()
        }
    samples = results.get("samples", [])
    columns = ScoreColumns.of(
        [text(s.get("sample_id")) for s in samples],
        [text(s.get("category")) or NO_CATEGORY for s in samples],
        {m: [number(s["scores"].get(m)) for s in samples] for m in metric_names(results)},
    )
    return {
        category: {m: summary.as_dict() for m, summary in summaries.items()}
        for category, summaries in columns.summaries_by_category().items()
    }


@dataclass(frozen=True)
class Shortfall:
    """A sample's worst metric: the one furthest below (or least above) its threshold."""

    sample: Mapping[str, Any]
    metric: str
    score: float
    threshold: float | None

    @property
    def below(self) -> bool:
        return self.threshold is not None and self.score < self.threshold


def shortfall(sample: Mapping[str, Any], limits: Mapping[str, float]) -> Shortfall | None:
    """The sample's worst gated metric (a metric without a gate counts against 0)."""
    worst: Shortfall | None = None
    worst_margin = math.inf
    for metric, raw in sample.get("scores", {}).items():
        score = number(raw)
        if score is None:
            continue
        limit = limits.get(metric)
        margin = score - (limit if limit is not None else 0.0)
        if margin < worst_margin:
            worst, worst_margin = Shortfall(sample, str(metric), score, limit), margin
    return worst


def worst_samples(results: Mapping[str, Any], count: int | None = None) -> list[Shortfall]:
    """Samples ordered worst first by their worst gated metric; `count` of them (None: all)."""
    limits = thresholds(results)
    found = [s for s in (shortfall(x, limits) for x in results.get("samples", [])) if s]
    found.sort(key=lambda s: s.score - (s.threshold if s.threshold is not None else 0.0))
    return found if count is None else found[:count]


def evidence_hint(metric: str, details: Any) -> Evidence | None:
    """The first piece of evidence for why a sample scored low on a metric, from its details
    (each metric says what that is: MetricSpec.hint)."""
    if not isinstance(details, dict):
        return None
    if "undefined_reason" in details:
        return Evidence("undefined", text(details["undefined_reason"]))
    found = spec(metric)
    if found is None or found.hint is None:
        return None
    return found.hint(details)
