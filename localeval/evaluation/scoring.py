"""`localeval evaluate` as a library call: a data file scored into the run history.

Everything that can be checked without the models (options, the whole data file, the
output path, the database, the baseline, the run to resume) is checked when an
`ScoringRun` is made, before any model loads. `run()` then scores the samples the run
lacks through the run engine into the history, one committed sample at a time, so a run
stopped at any moment keeps what it finished and continues when started again; memory
stays flat, since summaries and results.json are read back from the database.

Nothing here prints: what happens along the way goes to an `EvaluationEvents`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from pathlib import Path

from localeval.closing import Closing
from localeval.config import JudgeConfig, load_models_config
from localeval.data.samples import DatasetWarning, check_answered, read_samples
from localeval.data.shards import Shard
from localeval.database import Database, db_words
from localeval.engine import Scheduler, describe_run, order_metrics, score_samples
from localeval.errors import BudgetSpent, DatasetError, UsageError, param, rendered
from localeval.evaluation.checks import (
    check_history_given,
    check_not_a_pipe,
    data_change,
    embedder_language_warning,
    protected_inputs,
    run_gates,
    unused_models,
)
from localeval.evaluation.decided import (
    Decided,
    check_deciding_options,
    data_rows,
    deciding_order,
    start_deciding,
)
from localeval.evaluation.ray.driver import RayScoring
from localeval.evaluation.ray.join import import_ray
from localeval.evaluation.requests import (
    EvaluationEvents,
    EvaluationOutcome,
    EvaluationRequest,
    IterationCost,
    RaySettings,
)
from localeval.evaluation.resume import (
    RESUME_MATCHING,
    check_resume_target,
    choose_run,
    scan_dataset,
)
from localeval.evaluation.sources import load_scores, stored_report, stored_run_scores, stored_view
from localeval.history.records import StoredRun, ignore_invalid, skipped_row
from localeval.history.store import RunSink, RunStore
from localeval.judge import Usage
from localeval.metrics import (
    Metric,
    Tools,
    build_metric,
    configure_metrics,
    metric_names,
)
from localeval.results.contract import check_output, write_results
from localeval.results.diff import Comparison, compare_runs
from localeval.results.gates import (
    check_gate_on,
    check_max_drop,
    check_min_defined,
    check_overrides,
    evaluate_gates,
)
from localeval.results.model import SampleResult
from localeval.results.output_files import OutputTarget
from localeval.results.refs import RunRef
from localeval.results.view import RunView
from localeval.text import printable
from localeval.tools import ModelPool, load_tools
from localeval.tools.cache import cache_connection


class ScoringRun(Closing):
    """One `localeval evaluate` or `localeval.evaluate()`: checked when made, scored by
    `run()`; close it after. `tools`: models given as they are (test doubles; or a function
    giving them once all is checked), gated by the metrics' defaults; `pool`: models kept
    loaded for the process (the Python API's)."""

    def __init__(
        self,
        request: EvaluationRequest,
        events: EvaluationEvents | None = None,
        tools: Tools | Callable[[], Tools] | None = None,
        pool: ModelPool | None = None,
    ):
        self.request = request
        #: what this process restored from kept context states (counted as samples are stored)
        self.iteration = IterationCost()
        self.events = events or EvaluationEvents()
        self.tools, self.pool = tools, pool
        if request.resume is not None and request.new_run:
            raise UsageError(
                f"{param('resume')} and {param('resume=False')} contradict each other; give one"
            )
        check_max_drop(request.max_drop)
        check_deciding_options(request.until_decided, request.margin, bool(request.baseline))
        self.names = order_metrics(request.metrics)
        options = configure_metrics(self.names, request.metric_options)
        self.metrics = [build_metric(n, options) for n in self.names]
        self.overrides = check_overrides(request.thresholds, self.names, metric_names())
        check_min_defined(request.min_defined)
        check_gate_on(request.gate_on)
        request.budget.check()
        if request.ray is not None:
            request.ray.check()
            import_ray()  # a one-line error now, before the data is read, if it is missing
        self.label = request.data_label or printable(str(request.data))
        check_not_a_pipe(request.data, self.label)
        self.skipped: list[DatasetError] = []
        on_invalid = self._skip if request.skip_invalid else None
        self.shard = Shard.parse(request.shard) if request.shard else None
        self.dataset = scan_dataset(
            request.data, on_invalid, self.events.warned, self.label, self.shard
        )
        # a generated test set not yet filled by `answer`
        check_answered(request.data, self.label)
        self.models = load_models_config(request.models)
        if request.state_cache_gb is not None:
            self.models = self.models.with_judge_setting("state_cache_gb", request.state_cache_gb)
        self._check_models_named()
        self.output: OutputTarget | None = None
        if request.output is not None:
            self.output = check_output(request.output, self._inputs())
            if self.output.replaces:
                self.events.noted(
                    rendered(f"{param('output')} {request.output} exists; it will be overwritten")
                )
        check_history_given(request)
        self.store = RunStore.open(request.db)
        try:
            self._check_before_models()
        except BaseException:
            self.store.close()
            raise

    def _skip(self, error: DatasetError) -> None:
        self.skipped.append(error)
        self.events.skipped(error)

    def _check_models_named(self) -> None:
        """--judge and --embedder must name models.toml entries; one no metric uses is said."""
        for note in unused_models(self.request, self.models, self.metrics):
            self.events.noted(note)

    def _inputs(self) -> list[tuple[Path, str]]:
        """The files an output must never overwrite (localeval.evaluation.checks)."""
        return protected_inputs(self.request, self.models)

    def _check_before_models(self) -> None:
        request = self.request
        self.baseline: RunView | None = None
        if request.baseline is not None:
            self.baseline = load_scores(RunRef(request.baseline), self.store)
        self.target: StoredRun | None = None
        if request.resume is not None and request.resume != RESUME_MATCHING:
            self.target = check_resume_target(self.store, request.resume, self.dataset, self.names)
        thresholds = self._gates()[0]
        rows = data_rows(request.data, self.label, self.shard) if request.until_decided else []
        gated = [m for m in self.metrics if m.name in thresholds]
        self.deciding = start_deciding(
            request.until_decided, request.margin, self.baseline, gated, rows, self.store
        )
        if self.deciding is not None and self.deciding.n_paired < self.deciding.n_samples:
            self.events.noted(
                rendered(
                    f"the {param('baseline')} run holds {self.deciding.n_paired} of the "
                    f"{self.deciding.n_samples} samples: only those are scored and decide"
                )
            )
        if warning := self._embedder_language_warning():
            self.events.warned(warning)
        self.events.loaded(self.dataset.n_samples, len(self.skipped), self.names, self.label)

    def _embedder_language_warning(self) -> DatasetWarning | None:
        """Samples in a language the embedder does not read, when a metric embeds their text."""
        if self.tools is not None or not any(m.uses_embedder for m in self.metrics):
            return None  # models given as they are have no models.toml entry to tell
        return embedder_language_warning(self.request, self.models, self.metrics, self.dataset)

    def close(self) -> None:
        self.store.close()

    def _gates(self) -> tuple[dict[str, float], list[str], JudgeConfig | None]:
        """The run's gates (metric: threshold), the metrics whose threshold is the judge's
        own (models.toml), and that judge's entry."""
        judge = partial(self.models.judge, self.request.judge) if self.tools is None else None
        plan, judge_config = run_gates(self.metrics, self.overrides, judge)
        return plan.thresholds, plan.from_judge, judge_config

    def run(self) -> EvaluationOutcome:
        """Score the samples into the run history and complete the run with its gates (or,
        --until-decided, keep it stopped once the comparison is decided)."""
        request, metrics = self.request, self.metrics
        thresholds, from_judge, judge_config = self._gates()
        with ExitStack() as cluster:
            cache = self._cache(cluster)
            scheduler = None
            if self.tools is not None:
                tools = self.tools if isinstance(self.tools, Tools) else self.tools()
            elif request.ray is not None:
                scheduler = self._on_cluster(request.ray, cache)
                cluster.callback(scheduler.close)
                tools = scheduler.tools
            else:
                tools = load_tools(
                    self.models, metrics, request.judge, request.embedder, cache, pool=self.pool
                )
            run = self._score_run(tools, thresholds, scheduler)
        if scheduler is not None:
            self.events.cluster_done(scheduler.sent, scheduler.answered, scheduler.plan)
        if (changed := self._data_change()) is not None:
            # samples of two contents: the run must never be continued into completion
            self.store.invalidate(run.id, changed)
            raise UsageError(
                f"{changed}; run {run.id} is not complete and is never continued: "
                "evaluate it again to start a new run"
            )
        judge = judge_config.name if judge_config else None
        if self.deciding is None:
            return self._complete(run, thresholds, from_judge, judge)
        stored = self.store.get(run.id)
        report = self.deciding.comparison.report(stored.n_samples)
        # `runs show` and the reports say it: what the run's stored samples cost
        report["cost"] = self.iteration.after(
            stored.info.until_decided, stored.n_done, self.store.usage(run.id).prompt_tokens
        )
        if self.baseline is not None and self.baseline.run_id is not None:
            report["baseline"] = self.baseline.run_id
        self.store.record_decision(run.id, report)  # `runs show` tells it, as results.json
        stored = self.store.get(run.id)
        if stored.n_done < stored.n_samples:
            self.store.release(run.id)  # stopped by design: `evaluate` without it goes on
            view = stored_view(self.store, stored)
            return EvaluationOutcome(
                stored, view, from_judge, judge, until_decided=report, from_states=self.iteration
            )
        return replace(self._complete(stored, thresholds, from_judge, judge), until_decided=report)

    def _cache(self, opened: ExitStack) -> Database | None:
        """The judge/embedding cache's connection: the run history's own database, or the
        one `cache_db` names (kept open by `opened`); None with --no-cache."""
        request = self.request
        if not request.use_cache or self.tools is not None:
            return None  # models given as they are were put behind a cache already, or none
        if request.cache_db is not None:
            return opened.enter_context(cache_connection(request.cache_db))
        return self.store.connection

    def _on_cluster(self, settings: RaySettings, cache: Database | None) -> RayScoring:
        """The run's scoring on a Ray cluster, joined now (its actors start later, at the
        first sample the cache cannot answer)."""
        request = self.request
        scoring = RayScoring(
            settings, self.models, self.metrics, request.judge, request.embedder, cache
        )
        self.events.cluster_ready(scoring.plan)
        return scoring

    def _score_run(
        self, tools: Tools, thresholds: Mapping[str, float], scheduler: Scheduler | None
    ) -> StoredRun:
        """The run chosen (new, or one to continue) and scored in full."""
        request, metrics = self.request, self.metrics
        info = describe_run(metrics, tools, self.label, self.dataset.sha256)
        info.skipped_rows = [skipped_row(error) for error in self.skipped]
        info.shard = str(self.shard) if self.shard else None
        if self.deciding is not None:  # which metrics cannot have changed, now it is known
            self.deciding.settle(info)
        chosen = choose_run(
            self.store,
            info,
            self.dataset.n_samples,
            thresholds,
            request.resume,
            request.new_run,
            self.target,
        )
        for busy in chosen.in_use:
            self.events.in_use(busy)
        if chosen.resumed:
            self.events.resuming(chosen.run)
        self._score(chosen.run, chosen.resumed, metrics, tools, scheduler)
        return chosen.run

    def _score(
        self,
        run: StoredRun,
        resumed: bool,
        metrics: list[Metric],
        tools: Tools,
        scheduler: Scheduler | None = None,
    ) -> None:
        """Score what the run lacks; on any failure, Ctrl-C or SIGTERM say what is kept."""
        on_invalid = ignore_invalid if self.request.skip_invalid else None
        rows = read_samples(self.request.data, on_invalid, name=self.label)
        order = None
        if self.deciding is not None:
            rows = list(rows)
            order = deciding_order(self.store, run, rows, self.deciding, self.shard)
        self.events.scoring(run)
        try:
            sink = RunSink(self.store, run)
            on_scored = self._within_budget()
            if self.deciding is None or not self.deciding.comparison.decided():
                score_samples(rows, metrics, tools, sink, on_scored, scheduler, self.shard, order)
        except Decided:
            pass  # the run stays claimed until run() has read it
        except BaseException:
            self.events.scoring_ended()
            self._stopped(run, resumed)
            raise
        self.events.scoring_ended()

    def _within_budget(self) -> Callable[[SampleResult], None]:
        """What is done as each sample is stored: the events told, and the run stopped
        (BudgetSpent, kept as on Ctrl-C) once it has spent its budget."""
        budget, started = self.request.budget, time.monotonic()
        spent = Usage()
        scored = 0
        self.iteration = IterationCost()

        def on_scored(result: SampleResult) -> None:
            nonlocal spent, scored
            self.events.scored(result)
            spent += result.usage
            scored += 1
            self.iteration.add(result)
            if self.deciding is not None:  # decided first: a decided run has not stopped short
                comparison = self.deciding.comparison
                comparison.observe(result.sample.sample_id, result.scores())
                if comparison.decided():
                    raise Decided
            limit = budget.spent(time.monotonic() - started, spent.judge_calls)
            if limit is not None:
                raise BudgetSpent(limit, scored, time.monotonic() - started, spent.judge_calls)

        return on_scored

    def _stopped(self, run: StoredRun, resumed: bool) -> None:
        """The run stopped part-way: free it for the next command to continue, or, if it is new
        and stored nothing (a model that would not load), remove it: there is nothing to
        continue, and an empty incomplete run would only be offered for resuming."""
        try:
            done = self.store.get(run.id).n_done
            if not done and not resumed and self.store.discard_empty(run.id):
                return
            if (changed := self._data_change()) is not None:
                self.store.invalidate(run.id, changed)
                self.events.invalidated(run, changed)
                return
            self.store.release(run.id)
        except UsageError:
            return  # the database itself failed; its error says so
        self.events.stopped(run, done)

    def _data_change(self) -> str | None:
        """What happened to the data file since it was checked, if it is not the same."""
        return data_change(self.request.data, self.dataset, self.label)

    def _complete(
        self,
        run: StoredRun,
        thresholds: Mapping[str, float],
        from_judge: list[str],
        judge: str | None,
    ) -> EvaluationOutcome:
        # with the sub-scores (each rubric criterion), summarised like metrics of their own
        view = stored_view(self.store, run)
        gates = evaluate_gates(
            view.summaries,
            thresholds,
            self.request.min_defined,
            view.corrected,
            self.request.gate_on,
        )
        run = self.store.complete(run.id, gates)
        view = replace(view, gates=tuple(gates))
        return EvaluationOutcome(run, view, from_judge, judge, from_states=self.iteration)

    def write_results(self, outcome: EvaluationOutcome, path: Path) -> None:
        """The run's results.json, streamed from the database; the path is checked again,
        since hours may have passed since it was."""
        header, samples = stored_report(self.store, outcome.run)
        try:
            write_results(check_output(path, self._inputs()), header, samples)
        except UsageError as exc:
            raise UsageError(
                f"{exc}. The run is saved: `localeval runs show {outcome.run.id}"
                f"{db_words(self.store.path)} -o PATH` writes its results again"
            ) from None

    def compare_with_baseline(self, outcome: EvaluationOutcome) -> Comparison | None:
        """The run against the --baseline run (None without one)."""
        if self.baseline is None:
            return None
        return compare_runs(
            self.baseline, stored_run_scores(self.store, outcome.run, outcome.run.id)
        )
