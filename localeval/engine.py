"""The run engine: one function scores a stream of samples and hands each result to a sink.

`score_samples` is the only scoring loop. Its sink decides where results go: the run
history (localeval.runs.evaluation, for `localeval evaluate`), or memory (`MemorySink`,
for the Python API and the measuring scripts). It returns what it did; it prints nothing.

Samples are scored one after another: the in-process judge is one model on the CPU, and
its prefix reuse wants a sample's prompts together. The order of work is the scheduler's
(`Sequential`); a backend that can hold several samples in flight (a judge server) would
get a scheduler that scores several at once and still hands them to the sink in dataset
order, each with its own usage counter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

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
from localeval.results.model import RunInfo, RunResult, SampleResult, new_run_id, now


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
    # the records hold what besides the model changes its numbers (a run resumed or
    # compared with other settings is another evaluation)
    judge = tools.judge.identity.record() if tools.judge is not None else None
    if judge is not None and tools.calibration:
        judge["calibration"] = {k: m.record() for k, m in sorted(tools.calibration.items())}
    embedder = tools.embedder.identity.record() if tools.embedder is not None else None
    return RunInfo(
        new_run_id(),
        now(),
        [m.name for m in metrics],
        judge,
        embedder,
        # the words said to the judge: its prompt set's version
        prompt_version=tools.prompts.version,
        dataset=dataset,
        dataset_sha256=dataset_sha256,
        metric_settings={m.name: metric_settings(m) for m in metrics},
    )


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


class Sink(Protocol):
    """Where a run's results go, one sample at a time, in dataset order."""

    def has(self, position: int, sample: Sample) -> bool:
        """Whether the sink holds this sample's result already (a resumed run)."""
        ...

    def add(self, position: int, result: SampleResult) -> None: ...


@dataclass
class MemorySink:
    """Keeps every result in a list (the Python API; the data is small)."""

    results: list[SampleResult] = field(default_factory=list)

    def has(self, position: int, sample: Sample) -> bool:
        return False

    def add(self, position: int, result: SampleResult) -> None:
        self.results.append(result)


Score = Callable[[Sample], SampleResult]


class Scheduler(Protocol):
    """Decides how the samples' scoring is laid out in time; yields results in order."""

    def run(
        self, jobs: Iterable[tuple[int, Sample]], score: Score
    ) -> Iterator[tuple[int, SampleResult]]: ...


class Sequential:
    """One sample after another: what an in-process judge wants."""

    def run(
        self, jobs: Iterable[tuple[int, Sample]], score: Score
    ) -> Iterator[tuple[int, SampleResult]]:
        for position, sample in jobs:
            yield position, score(sample)


@dataclass
class Scored:
    """What `score_samples` did: samples scored now, samples the sink held already, and
    what the scoring cost."""

    scored: int = 0
    kept: int = 0
    usage: Usage = field(default_factory=Usage)


def score_samples(
    samples: Iterable[Sample],
    metrics: Sequence[Metric],
    tools: Tools,
    sink: Sink,
    on_scored: Callable[[SampleResult], None] | None = None,
    scheduler: Scheduler | None = None,
) -> Scored:
    """Score every sample the sink lacks with every metric and hand it to the sink."""
    tally = Scored()

    def jobs() -> Iterator[tuple[int, Sample]]:
        for position, sample in enumerate(samples):
            if sink.has(position, sample):
                tally.kept += 1  # scored before the run was interrupted
            else:
                yield position, sample

    def score(sample: Sample) -> SampleResult:
        return score_sample(sample, metrics, tools)

    for position, result in (scheduler or Sequential()).run(jobs(), score):
        sink.add(position, result)
        tally.scored += 1
        tally.usage += result.usage
        if on_scored is not None:
            on_scored(result)
    return tally


def evaluate(
    samples: Iterable[Sample],
    metric_names: Iterable[str],
    tools: Tools,
    on_sample: Callable[[SampleResult], None] | None = None,
    dataset: str | None = None,
    options: MetricOptions | None = None,
) -> RunResult:
    """Score every sample with every metric named, set up with `options`, keeping all results
    in memory; call `on_sample` as each one finishes."""
    metrics = [build_metric(n, options) for n in order_metrics(metric_names)]
    info = describe_run(metrics, tools, dataset=dataset)
    sink = MemorySink()
    tally = score_samples(samples, metrics, tools, sink, on_sample)
    return RunResult(info, sink.results, tally.usage)
