"""The Python API's evaluation: `localeval.evaluate()`, `localeval.estimate_cost()`,
`localeval.diff()` and `localeval.report()`.

    import localeval

    run = localeval.evaluate("examples/demo.jsonl")  # or a DataFrame, a list of dicts, ...
    run.summary["faithfulness"]["mean"], run.passed
    run.to_pandas()        # one row per sample, a column per score
    run.evidence()         # one row per sample and metric: score and why

`evaluate` takes every option of `localeval evaluate` as a keyword, and the command is its
client: it runs localeval.evaluation.scoring's ScoringRun, with the same checks, gates,
cache and run history; data given in code is checked as a file's rows are and scored
from a JSONL file written for it (localeval.data.given). Models load once per process and
later calls reuse them. Nothing here prints: bad input raises the errors of
localeval.errors, and what happens along the way goes to the `events` given (by default
warnings and tqdm's bar, localeval.api.events).
"""

from __future__ import annotations

import inspect
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from localeval.api.evaluation import Decision, Evaluation, EvaluationCost
from localeval.api.events import LocalevalWarning, Warned, warn
from localeval.api.history import DEFAULT_DB, DefaultDb, diff, history_location, report
from localeval.data.given import given_rows, write_given
from localeval.data.stdin import readable_data
from localeval.database import Location, default_db_path
from localeval.errors import UsageError, param
from localeval.evaluation.requests import (
    Budget,
    EvaluationEvents,
    EvaluationOutcome,
    EvaluationRequest,
    RaySettings,
)
from localeval.evaluation.resume import RESUME_MATCHING
from localeval.evaluation.scoring import ScoringRun
from localeval.evaluation.sources import results_dict
from localeval.history.store import RunStore
from localeval.metrics import Tools, options_from_code, take_old_spellings
from localeval.results.comparability import comparability_warnings
from localeval.results.decision import DEFAULT_MARGIN
from localeval.results.diff import DEFAULT_MAX_DROP
from localeval.results.gates import AUTO, DEFAULT_MIN_DEFINED
from localeval.results.model import RunResult
from localeval.tools import ModelPool

#: the models of this process, loaded by the first call that needs each
MODELS = ModelPool()


def evaluate(
    data: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    judge: str | None = None,
    embedder: str | None = None,
    models: str | os.PathLike[str] | None = None,
    thresholds: Mapping[str, float] | Sequence[str] | None = None,
    db: str | os.PathLike[str] | Location | DefaultDb | None = DEFAULT_DB,
    min_defined: float = DEFAULT_MIN_DEFINED,
    gate_on: str = AUTO,
    use_cache: bool = True,
    skip_invalid: bool = False,
    resume: bool | str = True,
    progress: bool = True,
    options: Mapping[str, Any] | None = None,
    tools: Tools | Callable[[], Tools] | None = None,
    output: str | os.PathLike[str] | None = None,
    baseline: Any = None,
    max_drop: float = DEFAULT_MAX_DROP,
    until_decided: bool = False,
    margin: float | None = None,
    shard: str | None = None,
    max_minutes: float | None = None,
    max_calls: int | None = None,
    ray: bool | str | RaySettings | None = None,
    state_cache_gb: float | None = None,
    events: EvaluationEvents | None = None,
    keep_models: bool = True,
) -> Evaluation:
    """Score `data` and check the quality gates, as `localeval evaluate` does; each keyword
    is that command's option of the same name (docs/python.md lists them).

    data: a data file (JSONL, JSON, CSV, or .gz; "-" standard input), a list of dicts (or
    Sample objects), a pandas DataFrame or a datasets.Dataset, with localeval's or Ragas'
    field names. metrics: default the four RAG metrics. judge, embedder: models.toml
    entries (`models`, found as by the command line). thresholds: metric -> minimum mean
    (or "METRIC=VALUE" texts), over the defaults. db: the run history the run is kept in (a
    file, a postgresql:// URL; default as the command line's); None keeps no run (the cache
    is then the default database's). gate_on: "judge", "corrected" or "auto".
    use_cache=False asks the models afresh; skip_invalid: leave out invalid rows instead of
    raising; resume: True continues an interrupted run of the same evaluation if there is
    one, False starts a new run, a run id continues that run, "matching" the interrupted
    one (which must exist); options: the metrics' own, by dest ({"rubric_criteria":
    "rubric.yaml"}); tools: models already loaded (test doubles, or a function giving them
    once the data is checked), gated by the metrics' defaults. output: write results.json
    there. baseline: a run (an Evaluation, a run id, latest, latest~N, a results.json path)
    to compare with; a metric worse by more than max_drop, beyond the noise, fails
    `passed`; until_decided (with baseline): score in a seeded random order and stop once
    every gated metric is decided (margin: a change within +-margin is none). shard: "K/N".
    max_minutes, max_calls: stop there (BudgetSpent; the run is kept, the same call goes
    on). ray: score on a Ray cluster: True, its address, or RaySettings(address, actors,
    threads). state_cache_gb: the llama.cpp judge's context states kept on disk. events:
    what the evaluation tells along the way (default: warnings, and tqdm's bar if
    `progress`). keep_models=False loads the models for this call alone (the command line,
    one call per process) instead of keeping them for the process's later calls. Returns
    an Evaluation; raises localeval.errors' errors.
    """
    given = dict(locals())
    with _opened(given) as (scoring, events):
        if progress and tools is None:
            _tell_expected_times(scoring, events)
        outcome = scoring.run()
        evaluation = _evaluation(scoring, outcome, events, given)
        events.evaluated(evaluation)
        if scoring.request.output is not None:
            scoring.write_results(outcome, scoring.request.output)
        return evaluation


def estimate_cost(
    data: Any, metrics: Sequence[str] | str | None = None, **options: Any
) -> EvaluationCost:
    """What `evaluate(data, metrics, **options)` would cost, counted without evaluating
    anything, as `localeval evaluate --estimate`: an EvaluationCost (judge calls, prompt
    tokens it evaluates, tokens it generates, what the cache answers, per metric and in
    total, and the time on this machine, its speed measured once; with `ray`, how the
    cluster's actors would divide it). Takes evaluate()'s keywords, checked as it checks
    them, but max_minutes and max_calls (an estimate spends nothing); with `output`, the
    estimate is written there as JSON."""
    bound = inspect.signature(evaluate).bind(data, metrics, **options)  # TypeError as a call
    bound.apply_defaults()
    given = bound.arguments
    if given["max_minutes"] is not None or given["max_calls"] is not None:
        raise UsageError(
            f"{param('estimate_cost()')} evaluates nothing: {param('max_minutes')} and "
            f"{param('max_calls')} do not apply"
        )
    from localeval.evaluation.estimate import cluster_division, estimate_evaluation
    from localeval.results.contract import write_json

    with _opened(given) as (scoring, _):
        counted = estimate_evaluation(scoring)
        division = cluster_division(scoring, counted) if scoring.request.ray else None
        cost = EvaluationCost(counted, division)
        if scoring.output is not None:
            write_json(scoring.output, cost.as_dict())
            cost = replace(cost, written=scoring.output.path)
    return cost


@contextmanager
def _opened(given: Mapping[str, Any]) -> Iterator[tuple[ScoringRun, EvaluationEvents]]:
    """The evaluation asked for by evaluate()'s arguments, checked (and closed after), and
    the events it tells."""
    db = given["db"]
    events = given["events"] or Warned(given["progress"], kept=db is not None)
    with ExitStack() as opened:
        scratch = Path(opened.enter_context(tempfile.TemporaryDirectory(prefix="localeval-")))
        data = _data_file(given["data"], scratch, given["skip_invalid"])
        path, label = opened.enter_context(data)
        pool = MODELS if given["tools"] is None and given["keep_models"] else None
        request = _request(given, path, label, scratch)
        yield opened.enter_context(ScoringRun(request, events, given["tools"], pool)), events


def _request(
    given: Mapping[str, Any], path: Path, label: str | None, scratch: Path
) -> EvaluationRequest:
    """evaluate()'s arguments as the engine's request."""
    db, metrics, thresholds = given["db"], given["metrics"], given["thresholds"] or {}
    resume, output, baseline = given["resume"], given["output"], given["baseline"]
    if isinstance(metrics, str):
        metrics = [metrics]
    return EvaluationRequest(
        path,
        tuple(metrics or ()),
        output=None if output is None else Path(output),
        thresholds=dict(thresholds) if isinstance(thresholds, Mapping) else tuple(thresholds),
        judge=given["judge"],
        embedder=given["embedder"],
        models=None if given["models"] is None else str(given["models"]),
        skip_invalid=given["skip_invalid"],
        db=history_location(db) if db is not None else scratch / "runs.db",
        cache_db=default_db_path() if db is None else None,
        resume=resume if isinstance(resume, str) else None,
        new_run=resume is False,
        baseline=_baseline_ref(baseline),
        max_drop=given["max_drop"],
        use_cache=given["use_cache"],
        state_cache_gb=given["state_cache_gb"],
        metric_options=_metric_options(given["options"] or {}),
        min_defined=given["min_defined"],
        gate_on=given["gate_on"],
        data_label=label,
        shard=given["shard"],
        budget=Budget(given["max_minutes"], given["max_calls"]),
        ray=_ray(given["ray"]),
        until_decided=given["until_decided"],
        margin=given["margin"],
    )


@contextmanager
def _data_file(data: Any, scratch: Path, skip_invalid: bool) -> Iterator[tuple[Path, str | None]]:
    """The data file to score, and the name to show for it (None: its path): a file given
    (standard input, "-", or a pipe kept in a file meanwhile: it is read twice, checked
    then scored), or one written in `scratch` for data given in code."""
    found = given_rows(data)
    if found is None:
        with readable_data(Path(data), sys.stdin.buffer) as readable:
            yield readable
        return
    rows, label = found
    path = scratch / "samples.jsonl"
    write_given(rows, label, path, skip_invalid)
    yield path, label


def _tell_expected_times(scoring: ScoringRun, events: EvaluationEvents) -> None:
    """The events told each sample's estimated seconds, when the judge's speed here is
    kept already (the time left then starts from the estimate)."""
    from localeval.evaluation.estimate import estimate_evaluation, speed_kept

    if speed_kept(scoring):
        events.estimated(estimate_evaluation(scoring, measure=False).per_item)


def _evaluation(
    scoring: ScoringRun, outcome: EvaluationOutcome, events: EvaluationEvents, given: Any
) -> Evaluation:
    """The Evaluation of a finished scoring, its results read now from a history that is
    not kept (db=None), else on first use."""
    kept = scoring.store.path if given["db"] is not None else None
    results: Callable[[], dict[str, Any]] = _reader(kept, outcome.run.id)
    if kept is None:
        loaded = results_dict(scoring.store, outcome.run)
        results = lambda: loaded  # noqa: E731
    scored = None
    if isinstance(events, Warned):
        scored = RunResult(outcome.run.info, events.results, outcome.usage)
    decision = None
    if outcome.until_decided is not None:
        decision = _decision(scoring, outcome)
    comparison = scoring.compare_with_baseline(outcome) if decision is None else None
    return Evaluation(
        outcome, kept, results, scored, comparison, scoring.request.max_drop, decision
    )


def _reader(db: Location | None, run_id: str) -> Callable[[], dict[str, Any]]:
    def read() -> dict[str, Any]:
        store = RunStore.open(db)
        try:
            return results_dict(store, store.get(run_id))
        finally:
            store.close()

    return read


def _decision(scoring: ScoringRun, outcome: EvaluationOutcome) -> Decision:
    """until_decided's verdicts, with why the runs' scores may differ besides the system."""
    report, baseline = outcome.until_decided or {}, scoring.baseline
    warned: list[str] = []
    if baseline is not None:
        metrics = list(report["verdicts"])
        warned = comparability_warnings(baseline.run, outcome.view.run, metrics, True)
    label = baseline.label if baseline is not None else "the baseline"
    return Decision(report, label, warned)


def _baseline_ref(baseline: Any) -> str | None:
    """A baseline given as a run id, latest, latest~N or a results.json path, or as an
    Evaluation (its run id: it is in the same history)."""
    if baseline is None:
        return None
    if isinstance(baseline, Evaluation):
        return baseline.run_id
    if isinstance(baseline, str | os.PathLike):
        return os.fspath(baseline)
    raise UsageError(
        f"baseline: expected a run id, latest, a results.json path or an Evaluation, got "
        f"{type(baseline).__name__}"
    )


def _ray(ray: bool | str | RaySettings | None) -> RaySettings | None:
    """ray=True: the cluster RAY_ADDRESS names, else one started here; an address; or
    RaySettings (with actors and threads)."""
    if ray is None or ray is False:
        return None
    if isinstance(ray, RaySettings):
        return ray
    return RaySettings(None if ray is True else str(ray))


def _metric_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics' options given in code, by dest, as the command line hands them on: a
    path as a Path, a repeatable option's single value as a list; an unknown name refused,
    an old one taken with a DeprecationWarning; None is an option not given."""
    current, renamed = take_old_spellings({k: v for k, v in given.items() if v is not None})
    for option in renamed:
        warn(
            f"options: '{option.old_dest}' is now '{option.dest}'; the old name will be "
            "removed in a later release",
            DeprecationWarning,
        )
    return options_from_code(current)


__all__ = [
    "DEFAULT_DB",
    "DEFAULT_MARGIN",
    "RESUME_MATCHING",
    "LocalevalWarning",
    "RaySettings",
    "diff",
    "estimate_cost",
    "evaluate",
    "report",
]
