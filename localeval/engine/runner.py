"""Running metrics over samples: load the models a run needs once, score, summarise."""

from __future__ import annotations

import datetime as dt
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.data.samples import Sample
from localeval.errors import PromptTooLongError, UsageError
from localeval.judge import Usage
from localeval.metrics import (
    RAG_METRICS,
    Metric,
    MetricOptions,
    MetricResult,
    Tools,
    build_metric,
    metric_names,
)
from localeval.prompts import PROMPT_VERSION
from localeval.stats import MetricSummary, summarize


@dataclass
class SampleResult:
    """Every requested metric's result for one sample."""

    sample: Sample
    results: dict[str, MetricResult]
    #: what scoring this sample cost (judge calls, tokens, seconds)
    usage: Usage = field(default_factory=Usage)

    def scores(self) -> dict[str, float | None]:
        return {name: r.score for name, r in self.results.items()}


@dataclass
class RunInfo:
    """What a run was: when, with which models and prompts, on which metrics."""

    run_id: str
    created: str
    metrics: list[str]
    judge: dict[str, str] | None
    embedder: dict[str, str] | None
    prompt_version: str = PROMPT_VERSION
    dataset: str | None = None
    dataset_sha256: str | None = None
    #: each metric's settings that change its scores, e.g. {"answer_relevancy": {"n_questions": 3}}
    metric_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: rows of the dataset left out by --skip-invalid: file, line, field, reason
    skipped_rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RunResult:
    """A finished run: its description, per-sample results and the judge's usage."""

    info: RunInfo
    samples: list[SampleResult]
    usage: Usage = field(default_factory=Usage)

    def summary(self) -> dict[str, MetricSummary]:
        return {m: summarize([s.results[m].score for s in self.samples]) for m in self.info.metrics}

    def summary_by_category(self) -> dict[str, dict[str, MetricSummary]]:
        groups: dict[str, list[SampleResult]] = {}
        for result in self.samples:
            groups.setdefault(result.sample.category or "(none)", []).append(result)
        return {
            category: {
                m: summarize([s.results[m].score for s in members]) for m in self.info.metrics
            }
            for category, members in sorted(groups.items())
        }


def order_metrics(names: Iterable[str]) -> list[str]:
    """Validate metric names and put them in the order that shares prompt prefixes best."""
    wanted = list(dict.fromkeys(names)) or list(RAG_METRICS)
    known = metric_names()
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise UsageError(f"unknown metric '{unknown[0]}' (known: {', '.join(sorted(known))})")
    # the RAG metrics first, in prefix-sharing order; any others after, as given
    return sorted(
        wanted, key=lambda n: RAG_METRICS.index(n) if n in RAG_METRICS else len(RAG_METRICS)
    )


def new_run_id() -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


def score_sample(sample: Sample, metrics: Sequence[Metric], tools: Tools) -> SampleResult:
    """Score one sample with each metric, noting what it cost; a prompt too long for the judge
    makes that metric undefined for the sample (with the reason) instead of failing the run."""
    started = time.perf_counter()
    before = tools.judge.usage.snapshot() if tools.judge is not None else Usage()
    results: dict[str, MetricResult] = {}
    for metric in metrics:
        try:
            results[metric.name] = metric.score(sample, tools)
        except PromptTooLongError as exc:
            results[metric.name] = MetricResult.undefined(
                f"too long for the judge: {exc.n_tokens} tokens needed, context holds "
                f"{exc.n_ctx} (raise n_ctx in models.toml or shorten the contexts)"
            )
    usage = tools.judge.usage - before if tools.judge is not None else Usage()
    usage.seconds = time.perf_counter() - started  # embedding included
    return SampleResult(sample, results, usage)


def metric_settings(metric: Metric) -> dict[str, Any]:
    """A metric's settings: its public attributes that are plain values (e.g. n_questions)."""
    return {
        name: value
        for name, value in sorted(vars(metric).items())
        if not name.startswith("_") and isinstance(value, str | int | float | bool)
    }


def describe_run(
    metrics: Sequence[Metric],
    tools: Tools,
    dataset: str | None = None,
    dataset_sha256: str | None = None,
) -> RunInfo:
    """A new run's description: a fresh id, the time, and the models and metrics it uses."""
    # the record holds what besides the model changes its numbers (a run resumed or compared
    # with other settings is another evaluation)
    judge_info = tools.judge.identity.record() if tools.judge is not None else None
    embedder_info = tools.embedder.identity.record() if tools.embedder is not None else None
    return RunInfo(
        new_run_id(),
        dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        [m.name for m in metrics],
        judge_info,
        embedder_info,
        dataset=dataset,
        dataset_sha256=dataset_sha256,
        metric_settings={m.name: metric_settings(m) for m in metrics},
    )


def evaluate(
    samples: Iterable[Sample],
    metric_names: Iterable[str],
    tools: Tools,
    on_sample: Callable[[SampleResult], None] | None = None,
    dataset: str | None = None,
    options: MetricOptions | None = None,
) -> RunResult:
    """Score every sample with every metric named, set up with `options`, keeping all
    results in memory; call `on_sample` as each one finishes. (`localeval evaluate` streams
    into the run history instead, see localeval.runs.history.)"""
    metrics = [build_metric(n, options) for n in order_metrics(metric_names)]
    info = describe_run(metrics, tools, dataset=dataset)
    usage = Usage()
    results: list[SampleResult] = []
    for sample in samples:
        result = score_sample(sample, metrics, tools)
        results.append(result)
        usage += result.usage
        if on_sample is not None:
            on_sample(result)
    return RunResult(info, results, usage)
