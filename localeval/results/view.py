"""Reading a results dict for the report renderers: the metrics, gates and worst samples.

A results file may come from another machine or an older version, so every value is
checked for its type here and anything unexpected is treated as missing, never trusted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from localeval.results.gates import GateResult
from localeval.stats import summarize


def number(value: Any) -> float | None:
    """A finite float, or None for anything else (None, text, booleans, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    result = float(value)
    return result if math.isfinite(result) else None


def text(value: Any) -> str:
    """Any JSON value as display text (the renderers escape it)."""
    return "" if value is None else value if isinstance(value, str) else str(value)


def item(values: Any, index: int) -> Any:
    """values[index] when values is a list long enough, else None."""
    return values[index] if isinstance(values, list) and 0 <= index < len(values) else None


def fmt(value: Any, digits: int = 3) -> str:
    """A score for display: 3 decimals, or '-' when there is none."""
    x = number(value)
    return "-" if x is None else f"{x:.{digits}f}"


def metric_names(results: Mapping[str, Any]) -> list[str]:
    """The run's metrics in its order; the summary's keys for a file without run.metrics."""
    listed = results.get("run", {}).get("metrics")
    if isinstance(listed, list) and all(isinstance(m, str) for m in listed):
        return list(listed)
    return [str(m) for m in results.get("summary", {})]


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
            )
        )
    return gates


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
    groups: dict[str, list[dict[str, Any]]] = {}
    for sample in results.get("samples", []):
        groups.setdefault(text(sample.get("category")) or "(none)", []).append(sample)
    metrics = metric_names(results)
    return {
        category: {
            m: summarize([number(s["scores"].get(m)) for s in members]).as_dict() for m in metrics
        }
        for category, members in sorted(groups.items())
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


def _first_with(details: Mapping[str, Any], verdict: str, key: str = "statements") -> str | None:
    verdicts, items = details.get("verdicts"), details.get(key)
    if not isinstance(verdicts, list) or not isinstance(items, list):
        return None
    for item, label in zip(items, verdicts, strict=False):
        if label == verdict:
            return text(item)
    return None


def _weakest(details: Mapping[str, Any], key: str, label: str) -> Evidence | None:
    """The statement with the lowest probability, when none was judged outright bad."""
    statements, probabilities = details.get("statements"), details.get(key)
    if not isinstance(statements, list) or not isinstance(probabilities, list):
        return None
    pairs = [(number(p), text(s)) for s, p in zip(statements, probabilities, strict=False)]
    scored = [(p, s) for p, s in pairs if p is not None]
    if not scored:
        return None
    probability, statement = min(scored)
    return Evidence(f"{label} ({probability:.2f})", statement)


@dataclass(frozen=True)
class Evidence:
    """Why a sample scored low: our words (`label`), and dataset text (`quote`) if any."""

    label: str
    quote: str | None = None

    def plain(self) -> str:
        return self.label if self.quote is None else f"{self.label}: {self.quote}"


def evidence_hint(metric: str, details: Any) -> Evidence | None:
    """The first piece of evidence for why a sample scored low on a metric, from its details."""
    if not isinstance(details, dict):
        return None
    if "undefined_reason" in details:
        return Evidence("undefined", text(details["undefined_reason"]))
    if metric == "faithfulness":
        statement = _first_with(details, "unsupported")
        if statement is not None:
            return Evidence("unsupported", statement)
        return _weakest(details, "support", "least supported")
    if metric == "context_recall":
        statement = _first_with(details, "not attributed")
        if statement is not None:
            return Evidence("not in the contexts", statement)
        return _weakest(details, "attribution", "least attributed")
    if metric == "context_precision":
        verdicts = details.get("verdicts")
        if isinstance(verdicts, list):
            useless = [str(k) for k, v in enumerate(verdicts, start=1) if v == "not useful"]
            if useless:
                return Evidence(f"chunks not useful: {', '.join(useless)} of {len(verdicts)}")
    if metric == "answer_relevancy":
        if (number(details.get("noncommittal_probability")) or 0.0) >= 0.5:
            return Evidence("the answer is noncommittal")
        answers = number(details.get("answers_probability"))
        if answers is not None and answers < 0.5:
            return Evidence(f"judged not to answer the question ({answers:.2f})")
        questions, sims = details.get("generated_questions"), details.get("similarities")
        if isinstance(questions, list) and isinstance(sims, list):
            pairs = [(number(s), text(q)) for q, s in zip(questions, sims, strict=False)]
            scored = [(s, q) for s, q in pairs if s is not None]
            if scored:
                similarity, question = min(scored)
                return Evidence(f"answers instead ({similarity:.2f})", question)
    return None
