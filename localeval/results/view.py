"""A run as every view of it reads it: `RunView`, read once from a results dict (a
results.json file, or a stored run written as one: `read_run`) or from the run history
(localeval.evaluation.sources.stored_view). The reports (console, Markdown, HTML, JUnit), `diff`,
`runs show`, `runs merge` and `evaluate`'s summary are all drawn from it.

A results file may come from another machine or an older version, so every value is
checked for its type here and anything unexpected is treated as missing, never trusted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from localeval.judge import Usage
from localeval.metrics import spec
from localeval.metrics.base import Evidence
from localeval.metrics.parts.explain import number, text
from localeval.results.calibration import CalibrationStatus, calibration_status
from localeval.results.corrected import (
    CorrectedSummary,
    read_category_corrections,
    read_corrections,
)
from localeval.results.diagnosis import RunDiagnosis, run_diagnosis
from localeval.results.gates import CORRECTED, JUDGE, GateResult
from localeval.results.summary import ScoreColumns
from localeval.stats import MetricSummary
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


def sample_details(results: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Each sample's details ({metric: details}), skipping what is not one."""
    samples = results.get("samples")
    for sample in samples if isinstance(samples, list) else []:
        details = sample.get("details") if isinstance(sample, Mapping) else None
        if isinstance(details, Mapping):
            yield details


def gate_results(results: Mapping[str, Any]) -> list[GateResult]:
    """The gates a results dict recorded (those without a numeric threshold left out)."""
    gates = []
    for gate in results.get("gates", []):
        if not isinstance(gate, Mapping):
            continue
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
                CORRECTED if gate.get("reads") == CORRECTED else JUDGE,
                _interval(gate.get("ci95")),
                _count(gate.get("labels_needed")),
            )
        )
    return gates


def _interval(value: Any) -> tuple[float, float] | None:
    """Two numbers, low then high, or None."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    low, high = number(value[0]), number(value[1])
    return None if low is None or high is None or low > high else (low, high)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def optional_text(value: Any) -> str | None:
    """A value as display text, None for none."""
    return None if value is None else text(value)


def read_summary(entry: Any) -> MetricSummary | None:
    """A summary of a results dict ({mean, n, n_undefined, ci95}); None for one that is not
    an object. A count that is missing reads as 0, an interval that is not two numbers as
    none."""
    if not isinstance(entry, Mapping):
        return None
    ci = entry.get("ci95")
    bounds = [number(x) for x in ci] if isinstance(ci, list) and len(ci) == 2 else []
    low, high = bounds if len(bounds) == 2 and None not in bounds else (None, None)
    return MetricSummary(
        number(entry.get("mean")),
        _count(entry.get("n")) or 0,
        _count(entry.get("n_undefined")) or 0,
        None if low is None or high is None else (low, high),
    )


def read_summaries(given: Any) -> dict[str, MetricSummary]:
    """A results dict's `summary` (or one category's), each metric's summary read."""
    if not isinstance(given, Mapping):
        return {}
    found = {str(metric): read_summary(entry) for metric, entry in given.items()}
    return {metric: summary for metric, summary in found.items() if summary is not None}


def read_usage(given: Any) -> Usage | None:
    """What a run recorded its judge did (run.usage), counts that are not counts as 0."""
    if not isinstance(given, Mapping):
        return None
    counts = {
        name: _count(given.get(name)) or 0
        for name in ("judge_calls", "cached_calls", "prompt_tokens", "generated_tokens", "retries")
    }
    return Usage(**counts, seconds=number(given.get("seconds")) or 0.0)


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


@dataclass(frozen=True)
class SummaryRow:
    """One metric's line of a summary table: its summary (None when the run recorded none),
    its gate and, beside a baseline run, that run's mean."""

    metric: str
    summary: MetricSummary | None
    threshold: float | None = None
    #: whether its gate passed; None for a metric without a gate
    passed: bool | None = None
    baseline: float | None = None
    #: the mean its gate read where that is not the judge's: the one corrected by labels
    gate_read: float | None = None

    @property
    def mean(self) -> float | None:
        return None if self.summary is None else self.summary.mean

    @property
    def below(self) -> bool:
        """A gated metric without a mean, or with the mean its gate read below its threshold."""
        read = self.mean if self.gate_read is None else self.gate_read
        return self.threshold is not None and (read is None or read < self.threshold)

    def gate_text(self) -> str:
        """The gate column of a summary table: the threshold, and which mean the gate read
        where the row's own mean (the judge's) is not it."""
        if self.threshold is None:
            return "-"
        if self.gate_read is None:
            return f"≥ {self.threshold:.2f}"
        return f"≥ {self.threshold:.2f} on the corrected mean {self.gate_read:.3f}"

    @property
    def delta(self) -> float | None:
        """The change of mean from the baseline run."""
        return None if self.mean is None or self.baseline is None else self.mean - self.baseline


def _no_details(sample_id: str, metric: str) -> Mapping[str, Any] | None:
    return None


@dataclass(frozen=True)
class RunView:
    """A run as reports, `diff` and summaries read it.

    `run` is results.json's "run" object; `columns` the scores of the run's metrics in
    sample order; `details(sample_id, metric)` a sample's evidence for a metric (read from
    the history only when asked); `summaries` each metric's and each sub-score's summary,
    and `by_category` per category; `samples` the samples as results.json holds them, where
    they were read (a report's); `usage` what the judge did. A view read for `diff` alone has
    no summaries, gates or samples.
    """

    label: str
    run: Mapping[str, Any]
    columns: ScoreColumns
    details: Callable[[str, str], Mapping[str, Any] | None] = _no_details
    summaries: Mapping[str, MetricSummary] = field(default_factory=dict)
    by_category: Mapping[str, Mapping[str, MetricSummary]] = field(default_factory=dict)
    gates: tuple[GateResult, ...] = ()
    samples: Sequence[Mapping[str, Any]] = ()
    usage: Usage | None = None
    #: which part of the pipeline failed (--answer-correctness-diagnose), or None
    diagnosis: RunDiagnosis | None = None
    #: per metric made of verdicts, its mean corrected by people's labels; per category
    corrected: Mapping[str, CorrectedSummary] = field(default_factory=dict)
    corrected_by_category: Mapping[str, Mapping[str, CorrectedSummary]] = field(
        default_factory=dict
    )
    #: per metric, people's values of the samples labelled at random (a stored run's)
    people: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @property
    def metrics(self) -> list[str]:
        """The run's metrics, in its order."""
        return list(self.columns.scores)

    @property
    def n_samples(self) -> int:
        return len(self.columns.sample_ids)

    @property
    def planned_samples(self) -> int | None:
        """The samples of a run `--until-decided` stopped before it scored them all (None
        for any other run)."""
        report = self.run.get("until_decided")
        total = report.get("samples_total") if isinstance(report, Mapping) else None
        return total if isinstance(total, int) and total > self.n_samples else None

    @property
    def run_id(self) -> str | None:
        return optional_text(self.run.get("id"))

    @property
    def created(self) -> str | None:
        return optional_text(self.run.get("created"))

    @property
    def dataset(self) -> str | None:
        return optional_text(self.run.get("dataset")) or None

    @property
    def prompt_version(self) -> str | None:
        return optional_text(self.run.get("prompt_version")) or None

    def model(self, role: str) -> Mapping[str, Any] | None:
        """The run's record of its "judge" or "embedder" (None without one)."""
        found = self.run.get(role)
        return found if isinstance(found, Mapping) else None

    @property
    def metric_settings(self) -> Mapping[str, Any]:
        """The run's settings per metric ({} for a file without them)."""
        settings = self.run.get("metric_settings")
        return settings if isinstance(settings, Mapping) else {}

    @cached_property
    def thresholds(self) -> dict[str, float]:
        """Each gated metric's threshold, as its gate recorded it."""
        return {gate.metric: gate.threshold for gate in self.gates}

    @property
    def failed_gates(self) -> list[GateResult]:
        return [gate for gate in self.gates if not gate.passed]

    @cached_property
    def calibration(self) -> CalibrationStatus | None:
        """Whether the judge's scores are calibrated (None: no metric is made of verdicts)."""
        return calibration_status(self.model("judge"), self.metrics, self.metric_settings)

    def summary_rows(
        self, baseline: RunView | None = None, every: bool = False
    ) -> list[SummaryRow]:
        """One row per metric of the run (`every`: per metric and sub-score summarised), with
        its gate and the baseline run's mean."""
        passed = {gate.metric: gate.passed for gate in self.gates}
        corrected = {g.metric: g.value for g in self.gates if g.reads == CORRECTED}
        names = list(self.summaries) if every else self.metrics
        return [
            SummaryRow(
                metric,
                self.summaries.get(metric),
                self.thresholds.get(metric),
                passed.get(metric),
                baseline.mean(metric) if baseline is not None else None,
                corrected.get(metric),
            )
            for metric in names
        ]

    def mean(self, metric: str) -> float | None:
        found = self.summaries.get(metric)
        return None if found is None else found.mean

    def worst(self, count: int | None = None) -> list[Shortfall]:
        """Samples ordered worst first by their worst gated metric; `count` of them (None:
        all)."""
        found = [s for s in (shortfall(x, self.thresholds) for x in self.samples) if s]
        found.sort(key=lambda s: s.score - (s.threshold if s.threshold is not None else 0.0))
        return found if count is None else found[:count]


def read_run(results: Mapping[str, Any], label: str | None = None) -> RunView:
    """A results dict as a RunView (`label`: how the user named it; default the run's id).
    Its summaries are the ones it recorded; per category, computed from its scores when it
    recorded none."""
    run = results.get("run")
    run = run if isinstance(run, Mapping) else {}
    given = results.get("samples")
    samples = [s for s in given if isinstance(s, Mapping)] if isinstance(given, list) else []
    metrics = metric_names(results)
    ids = [text(s.get("sample_id")) for s in samples]
    scores = [s.get("scores") if isinstance(s.get("scores"), Mapping) else {} for s in samples]
    columns = ScoreColumns.of(
        ids,
        [optional_text(s.get("category")) or None for s in samples],
        {m: [number(values.get(m)) for values in scores] for m in metrics},
    )
    evidence = {
        (sample_id, str(metric)): entry
        for sample_id, sample in zip(ids, samples, strict=True)
        if isinstance(details := sample.get("details"), Mapping)
        for metric, entry in details.items()
        if isinstance(entry, Mapping)  # evidence of another shape is not shown
    }
    return RunView(
        label if label is not None else text(run.get("id")),
        run,
        columns,
        lambda sample_id, metric: evidence.get((sample_id, metric)),
        read_summaries(results.get("summary")),
        _category_summaries(results, columns),
        tuple(gate_results(results)),
        samples,
        read_usage(run.get("usage")),
        run_diagnosis(sample_details(results)),
        read_corrections(results.get("summary")),
        read_category_corrections(results.get("summary_by_category")),
    )


def _category_summaries(
    results: Mapping[str, Any], columns: ScoreColumns
) -> dict[str, dict[str, MetricSummary]]:
    """Per category, per metric: the file's summary_by_category, or the summaries of the
    samples' scores when the file has none."""
    given = results.get("summary_by_category")
    if isinstance(given, Mapping) and all(isinstance(v, Mapping) for v in given.values()):
        return {str(category): read_summaries(metrics) for category, metrics in given.items()}
    return columns.summaries_by_category()


def as_view(results: RunView | Mapping[str, Any]) -> RunView:
    """A view of a run given as one or as a results dict."""
    return results if isinstance(results, RunView) else read_run(results)
