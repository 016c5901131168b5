"""The run engine: one function scores a stream of samples and hands each result to a sink.

`score_samples` is the only scoring loop. Its sink decides where results go: the run
history (localeval.evaluation.scoring, for `localeval evaluate`), or memory (`MemorySink`,
for the Python API and the measuring scripts). It returns what it did; it prints nothing.

The order of work is the scheduler's. `Sequential` scores one sample after another: the
in-process judge is one model on the CPU, and its prefix reuse wants a sample's prompts
together. A judge that can hold several samples in flight (a judge server with
`concurrency` > 1) gets `InFlight`, which scores that many at once, each through a
session of the judge (its own usage counter and request stream), and still hands the
results to the sink in dataset order, so resuming and the cache work as with one. A run
on a Ray cluster has a scheduler of its own (localeval.evaluation.ray.driver), which sends the
samples its cache cannot answer to actors and hands the results on in the same order.
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from localeval.data.samples import Sample
from localeval.data.shards import Shard
from localeval.errors import (
    LocalevalError,
    MetricFailed,
    PromptTooLongError,
    UsageError,
    VerdictUnreadable,
)
from localeval.judge import CancellableJudge, ConcurrentJudge, Usage, restored_tokens
from localeval.metrics import (
    DEFAULT_METRICS,
    PLUGIN_PROBLEMS,
    Metric,
    MetricOptions,
    MetricResult,
    MetricWithSettings,
    Tools,
    build_metric,
    metric_names,
    public_settings,
)
from localeval.results.model import (
    RunInfo,
    RunResult,
    SampleResult,
    new_run_id,
    now,
    software_versions,
)


def order_metrics(names: Iterable[str]) -> list[str]:
    """Validate metric names and put them in the order that shares prompt prefixes best."""
    wanted = list(dict.fromkeys(names)) or list(DEFAULT_METRICS)
    known = metric_names()
    unknown = [n for n in wanted if n not in known]
    if unknown and unknown[0] in PLUGIN_PROBLEMS:
        raise UsageError(PLUGIN_PROBLEMS[unknown[0]])  # an installed plugin left out
    if unknown:
        raise UsageError(f"unknown metric '{unknown[0]}' (known: {', '.join(sorted(known))})")
    # the RAG metrics first, in prefix-sharing order; any others after, as given
    return sorted(
        wanted,
        key=lambda n: DEFAULT_METRICS.index(n) if n in DEFAULT_METRICS else len(DEFAULT_METRICS),
    )


def metric_settings(metric: Metric) -> dict[str, Any]:
    """A metric's settings as its run records them: its `settings()`, or for a plugin's
    metric that has none, its public plain-valued attributes (public_settings)."""
    if isinstance(metric, MetricWithSettings):
        return dict(metric.settings())
    return public_settings(metric)


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
        # the words said to the judge: its prompt set's version, when a metric asks it
        prompt_version=tools.prompts.version if any(m.uses_judge for m in metrics) else None,
        dataset=dataset,
        dataset_sha256=dataset_sha256,
        metric_settings={m.name: metric_settings(m) for m in metrics},
        software=software_versions(),
    )


def score_sample(sample: Sample, metrics: Sequence[Metric], tools: Tools) -> SampleResult:
    """Score one sample with each metric, noting what it cost; a prompt too long for the judge
    makes that metric undefined for the sample (with the reason) instead of failing the run."""
    started = time.perf_counter()
    before = tools.judge.usage.snapshot() if tools.judge is not None else Usage()
    restored = restored_tokens(tools.judge)
    results = {metric.name: score_metric(sample, metric, tools) for metric in metrics}
    usage = tools.judge.usage - before if tools.judge is not None else Usage()
    usage.seconds = time.perf_counter() - started  # embedding included
    return SampleResult(sample, results, usage, restored_tokens(tools.judge) - restored)


def score_metric(sample: Sample, metric: Metric, tools: Tools) -> MetricResult:
    """One metric's result for a sample, checked as it enters the run (checked_result); a
    prompt too long for the judge, or a verdict it gave that cannot be read, makes the
    metric undefined for the sample, with the reason. A plugin's exception, or its
    sys.exit, is MetricFailed, naming the metric and the sample; Ctrl-C stops the run as
    anywhere else."""
    try:
        return guarded_score(sample, metric, tools)
    except PromptTooLongError as exc:
        return MetricResult.undefined(
            f"too long for the judge: {exc.n_tokens} tokens needed, context holds "
            f"{exc.n_ctx} (raise n_ctx in models.toml or shorten the contexts)"
        )
    except VerdictUnreadable as exc:
        return MetricResult.undefined(str(exc))


def guarded_score(sample: Sample, metric: Metric, tools: Tools) -> MetricResult:
    """`metric.score`, its result checked (checked_result); a plugin's exception or
    sys.exit is MetricFailed naming the metric and the sample; the judge's errors pass
    through (a run makes them undefined; calibrate counts them unparseable)."""
    try:
        result = metric.score(sample, tools)
    except (Exception, SystemExit) as exc:
        if isinstance(exc, LocalevalError) or _built_in(metric):
            raise  # localeval's own: a clear error already, or an internal one
        raise MetricFailed(metric.name, sample.sample_id, exc) from exc
    return checked_result(result)


def _built_in(metric: Metric) -> bool:
    """Whether the metric is localeval's own (not a plugin's, nor the caller's)."""
    return type(metric).__module__.startswith("localeval.")


def checked_result(result: Any) -> MetricResult:
    """A metric's result as a run may hold it: its score None or a number from 0 to 1 and
    its details plain JSON (no NaN or infinity). Anything else, which gates, reports and
    resuming would stumble on later, is undefined for the sample, with the reason."""
    if not isinstance(result, MetricResult):
        return MetricResult.undefined(f"the metric returned {type(result).__name__}, not a result")
    score = result.score
    if score is not None:
        number = isinstance(score, numbers.Real) and not isinstance(score, bool)
        if not number or not 0.0 <= float(score) <= 1.0:  # NaN fails the comparison too
            return MetricResult.undefined(
                f"the metric gave the score {score!r}, which is not a number from 0 to 1"
            )
        score = float(score)
    if not isinstance(result.details, dict):
        return MetricResult.undefined("the metric's details are not a dict")
    try:
        json.dumps(result.details)
    except (TypeError, ValueError) as exc:  # a value JSON has no form for; a cycle
        return MetricResult.undefined(f"the metric's details are not plain JSON ({exc})")
    try:
        json.dumps(result.details, allow_nan=False)
    except ValueError:
        return MetricResult.undefined("the metric's details hold NaN or infinity, not JSON")
    if result.reason is not None and not isinstance(result.reason, str):
        return MetricResult.undefined("the metric's reason for no score is not text")
    return dataclasses.replace(result, score=score)


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
Jobs = Iterable[tuple[int, Sample]]


class Scheduler(Protocol):
    """Decides how the samples' scoring is laid out in time; yields results in order."""

    def run(
        self, jobs: Iterable[tuple[int, Sample]], score: Score
    ) -> Iterator[tuple[int, SampleResult]]: ...


class Sequential:
    """One sample after another: what an in-process judge wants."""

    def run(self, jobs: Jobs, score: Score) -> Iterator[tuple[int, SampleResult]]:
        for position, sample in jobs:
            yield position, score(sample)


class InFlight:
    """Up to `concurrency` samples scored at once, in threads; results yielded in order.

    At most twice that many samples are taken from `jobs` ahead of the one yielded next,
    so memory stays flat. When the consumer stops (an error, Ctrl-C) the samples not
    started are dropped, `on_stop` cancels those in progress (a server judge aborts their
    requests), and the threads, daemons, never hold the process open.
    """

    def __init__(self, concurrency: int, on_stop: Callable[[], None] | None = None):
        self.concurrency = concurrency
        self.on_stop = on_stop

    def run(self, jobs: Jobs, score: Score) -> Iterator[tuple[int, SampleResult]]:
        todo: queue.Queue[tuple[Sample, Future[SampleResult]] | None] = queue.Queue()
        for number in range(self.concurrency):
            name = f"localeval-sample-{number}"
            threading.Thread(target=_work, args=(todo, score), name=name, daemon=True).start()
        window: deque[tuple[int, Future[SampleResult]]] = deque()
        source = iter(jobs)
        try:
            while True:
                while len(window) < 2 * self.concurrency:
                    job = next(source, None)
                    if job is None:
                        break
                    future: Future[SampleResult] = Future()
                    todo.put((job[1], future))
                    window.append((job[0], future))
                if not window:
                    return
                position, future = window.popleft()
                yield position, future.result()
        finally:
            for _, waiting in window:
                waiting.cancel()
            if window and self.on_stop is not None:
                self.on_stop()
            for _ in range(self.concurrency):
                todo.put(None)


def _work(todo: queue.Queue[tuple[Sample, Future[SampleResult]] | None], score: Score) -> None:
    """A worker of `InFlight`: scores samples until told to stop (None)."""
    while (item := todo.get()) is not None:
        sample, future = item
        if not future.set_running_or_notify_cancel():
            continue  # dropped before it started
        try:
            future.set_result(score(sample))
        except BaseException as exc:  # handed to the consumer, in dataset order
            future.set_exception(exc)


def scheduler_for(tools: Tools) -> Scheduler:
    """`InFlight` for a judge that holds several samples in flight, else `Sequential`."""
    judge = tools.judge
    if isinstance(judge, ConcurrentJudge) and judge.concurrency > 1:
        return InFlight(
            judge.concurrency, judge.cancel if isinstance(judge, CancellableJudge) else None
        )
    return Sequential()


def sample_tools(tools: Tools) -> Tools:
    """The tools for one sample: with a session of the judge when samples are in flight
    (its own usage counter, so that each sample's cost is its own)."""
    judge = tools.judge
    if not isinstance(judge, ConcurrentJudge) or judge.concurrency <= 1:
        return tools
    return dataclasses.replace(tools, judge=judge.session())


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
    shard: Shard | None = None,
    order: Sequence[int] | None = None,
) -> Scored:
    """Score every sample the sink lacks with every metric and hand it to the sink (only
    the samples of `shard`, when one is given, under their positions in the whole data).
    `order`: the positions to score, in this order (the others are left out); the samples
    are then held in memory. None: all, in the data's order."""
    tally = Scored()

    def jobs() -> Iterator[tuple[int, Sample]]:
        indexed: Iterable[tuple[int, Sample]] = enumerate(samples)
        if order is not None:
            held = list(samples)
            indexed = ((position, held[position]) for position in order)
        for position, sample in indexed:
            if shard is not None and not shard.holds(sample.sample_id):
                continue
            if sink.has(position, sample):
                tally.kept += 1  # scored before the run was interrupted
            else:
                yield position, sample

    def score(sample: Sample) -> SampleResult:
        return score_sample(sample, metrics, sample_tools(tools))

    for position, result in (scheduler or scheduler_for(tools)).run(jobs(), score):
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
