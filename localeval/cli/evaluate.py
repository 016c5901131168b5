"""`localeval evaluate`: score a data file into the run history and check the gates."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from localeval.cli.cluster import ray_options, ray_settings
from localeval.cli.exit_codes import exit_code_of
from localeval.cli.metric_options import MetricsCommand, given_metric_options
from localeval.cli.options import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    cache_option,
    command_to_continue,
    db_option,
    echo,
    embedder_option,
    judge_option,
    max_drop_option,
    models_option,
    output_option,
    progress_option,
    show_estimate,
    translate_errors,
)
from localeval.cli.progress import Progress
from localeval.cli.until_decided import decided, until_decided_options
from localeval.data.samples import DatasetWarning
from localeval.data.stdin import readable_data
from localeval.errors import BudgetSpent, DatasetError, RunInUseError, UsageError
from localeval.evaluation.estimate import cluster_division, estimate_evaluation, speed_kept
from localeval.evaluation.requests import (
    Budget,
    ClusterPlan,
    EvaluationEvents,
    EvaluationOutcome,
    EvaluationRequest,
)
from localeval.evaluation.scoring import ScoringRun
from localeval.history.records import StoredRun
from localeval.results.gates import AUTO, DEFAULT_MIN_DEFINED, GATE_ON
from localeval.results.model import SampleResult
from localeval.text import printable

if TYPE_CHECKING:
    from localeval.database import Location


class Printed(EvaluationEvents):
    """What `localeval evaluate` says on stderr while it works."""

    def __init__(self, data: str, show_progress: bool, new_run: bool = False):
        self.data = data
        self.show_progress = show_progress
        #: --no-resume was given: the same command would start yet another run
        self.new_run = new_run
        #: the run kept part-way when scoring stopped (the command that goes on names it)
        self.stopped_run: str | None = None
        self.progress: Progress | None = None
        #: each sample's estimated seconds, when an estimate was made for the time left
        self.expected: dict[str, float] | None = None
        #: samples scored at once (a Ray cluster's actors), which divide the time left
        self.parallel = 1

    def skipped(self, error: DatasetError) -> None:
        echo(f"Skipped: {error}", err=True)

    def warned(self, warning: DatasetWarning) -> None:
        echo(f"Warning: {warning}", err=True)

    def loaded(self, n_samples: int, n_skipped: int, metrics: Sequence[str]) -> None:
        loaded = f"Loaded {n_samples} samples from {self.data}"
        if n_skipped:
            loaded += f" ({n_skipped} invalid rows skipped)"
        echo(f"{loaded}; metrics: {', '.join(metrics)}", err=True)

    def noted(self, message: str) -> None:
        echo(f"Warning: {message}", err=True)

    def in_use(self, busy: RunInUseError) -> None:
        echo(
            f"Note: {busy}, so this process does not join it: it starts a run of its own.",
            err=True,
        )

    def resuming(self, run: StoredRun) -> None:
        echo(
            f"Resuming run {run.id}: {run.n_done} of {run.n_samples} samples were scored "
            f"before it stopped. (--no-resume starts a new run.)",
            err=True,
        )

    def scoring(self, run: StoredRun) -> None:
        expected = None if self.expected is None else sum(self.expected.values()) / self.parallel
        self.progress = Progress(
            run.n_samples,
            "Evaluating",
            enabled=self.show_progress,
            resumed=run.n_done,
            expected=expected,
        )

    def scored(self, result: SampleResult) -> None:
        if self.progress is not None:
            expected = (self.expected or {}).get(result.sample.sample_id, 0.0)
            self.progress.advance(expected=expected / self.parallel)

    def scoring_ended(self) -> None:
        if self.progress is not None:
            self.progress.close()

    def stopped(self, run: StoredRun, n_done: int) -> None:
        self.stopped_run = run.id
        again = "re-run the same command"
        if self.new_run:
            again = f"re-run the command with --resume {run.id} in place of --no-resume"
        echo(
            f"Run {run.id} is saved with {n_done} of {run.n_samples} samples scored; {again} "
            "to continue it.",
            err=True,
        )

    def cluster_ready(self, plan: ClusterPlan) -> None:
        self.parallel = plan.actors
        echo(f"Ray: {plan}", err=True)

    def cluster_done(self, sent: int, answered: int, plan: ClusterPlan) -> None:
        echo(
            f"Ray: {sent} samples scored by the actors, {answered} answered here from the cache",
            err=True,
        )

    def invalidated(self, run: StoredRun, reason: str) -> None:
        echo(
            f"{reason}: run {run.id} is never continued; re-run the same command to start a "
            "new run.",
            err=True,
        )


def show(outcome: EvaluationOutcome) -> None:
    """The summary, per category, the gates and what the judge did."""
    from localeval.reports import console

    echo(console.run_summary(outcome.view, outcome.from_judge, outcome.judge))


HELP = """Score the samples in DATA (JSONL, JSON array or CSV, or any of them .gz; `-`: read
JSONL or a JSON array from standard input) and check the quality gates.

Every run is kept in the run history (see `localeval runs`), sample by sample as it is
scored: after Ctrl-C or a crash, running the same command again continues the run.

Exit status: 0 all gates pass (or --estimate), 1 a gate (or the --baseline
regression gate) failed or --until-decided found a metric worse, 2 bad usage or
input, 3 internal error, 124 stopped at --max-minutes or --max-calls (the run is
kept: the same command continues it).
"""


@click.command(cls=MetricsCommand, help=HELP)
@click.argument("data", type=click.Path(path_type=Path, allow_dash=True))
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC")
@output_option("Write the full results (scores, evidence, summary, gates) as JSON here.")
@click.option(
    "--threshold",
    "thresholds",
    multiple=True,
    metavar="METRIC=VALUE",
    help="Override a quality gate, e.g. --threshold faithfulness=0.9 (a metric of this run).",
)
@click.option(
    "--min-defined",
    type=float,
    default=DEFAULT_MIN_DEFINED,
    show_default=True,
    metavar="SHARE",
    help="A gate fails, whatever its mean, when fewer than this share of the samples have a "
    "score for its metric (the rest undefined).",
)
@click.option(
    "--gate-on",
    type=click.Choice(GATE_ON),
    default=AUTO,
    show_default=True,
    help="Which mean a gate reads: the judge's; the one corrected by your team's labels "
    "(a gate with too few labelled samples fails, saying how many more); auto: the "
    "corrected one where the run has enough labels, else the judge's.",
)
@judge_option
@embedder_option
@models_option
@progress_option
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="Evaluate the valid rows and skip invalid ones, listing each (file, line, reason) "
    "on stderr and in results.json. Default: the first invalid row stops the run.",
)
@db_option
@click.option(
    "--resume",
    "resume",
    is_flag=False,
    flag_value="matching",
    default=None,
    metavar="[RUN]",
    help="Continue an interrupted run: RUN by id, or without a value the interrupted run of "
    "this same evaluation (which must exist). Re-running the same command does this anyway.",
)
@click.option(
    "--no-resume", "new_run", is_flag=True, help="Start a new run even if one was interrupted."
)
@click.option(
    "--baseline",
    metavar="RUN",
    default=None,
    help="Compare with this run (an id, latest, latest~N, or a results.json file) and exit 1 "
    "if a metric regressed (see --max-drop).",
)
@max_drop_option
@until_decided_options
@cache_option(
    "Answer judge calls and embeddings made before from the local cache (re-runs of "
    "unchanged data cost nothing); --no-cache asks the models again."
)
@click.option(
    "--state-cache-gb",
    type=click.FloatRange(min=0, max=1e6),
    default=None,
    metavar="GB",
    help="Keep at most this much of the llama.cpp judge's context states (each sample's "
    "contexts, read once, for later runs) in the user's cache folder; a decimal number, 0 keeps "
    "none. Default: the judge's models.toml state_cache_gb, else half the disk's free space, "
    "at most 64.",
)
@click.option(
    "--shard",
    metavar="K/N",
    default=None,
    help="Score only shard K of N (the samples whose id hashes to it), e.g. one worker of "
    "a CI matrix; `localeval runs merge` joins the shards into one run.",
)
@click.option(
    "--estimate",
    "estimate_only",
    is_flag=True,
    help="Evaluate nothing: count what the run will cost (judge calls, prompt tokens it "
    "evaluates, tokens it generates, what the cache answers) per metric and in total, and "
    "the time on this machine (its speed measured once, a few seconds). With --output, "
    "write it as JSON.",
)
@click.option(
    "--max-minutes",
    type=float,
    default=None,
    metavar="N",
    help="Stop once scoring has taken N minutes (the sample in progress is finished); the "
    "run is kept and the same command continues it.",
)
@click.option(
    "--max-calls",
    type=int,
    default=None,
    metavar="N",
    help="Stop once the judge has been called N times (calls the cache answers are free); "
    "the run is kept and the same command continues it.",
)
@ray_options
@translate_errors
def evaluate(
    data: Path,
    metrics: tuple[str, ...],
    output: Path | None,
    thresholds: tuple[str, ...],
    min_defined: float,
    gate_on: str,
    judge_name: str | None,
    embedder_name: str | None,
    models_path: str | None,
    progress: bool,
    db_path: Location | None,
    resume: str | None,
    new_run: bool,
    baseline: str | None,
    max_drop: float,
    until_decided: bool,
    margin: float | None,
    use_cache: bool,
    state_cache_gb: float | None,
    skip_invalid: bool,
    shard: str | None,
    estimate_only: bool,
    max_minutes: float | None,
    max_calls: int | None,
    ray_address: str | None,
    ray_actors: int | None,
    ray_threads: int | None,
    **options: Any,
) -> None:
    # the help is HELP
    request = EvaluationRequest(
        data,
        metrics,
        output=output,
        thresholds=thresholds,
        judge=judge_name,
        embedder=embedder_name,
        models=models_path,
        skip_invalid=skip_invalid,
        db=db_path,
        resume=resume,
        new_run=new_run,
        baseline=baseline,
        max_drop=max_drop,
        use_cache=use_cache,
        state_cache_gb=state_cache_gb,
        metric_options=given_metric_options(options),
        min_defined=min_defined,
        gate_on=gate_on,
        shard=shard,
        budget=Budget(max_minutes, max_calls),
        ray=ray_settings(ray_address, ray_actors, ray_threads),
        until_decided=until_decided,
        margin=margin,
    )
    if estimate_only and (max_minutes is not None or max_calls is not None):
        raise UsageError("--estimate evaluates nothing: --max-minutes and --max-calls do not apply")
    sys.exit(EXIT_OK if _read_and_evaluate(request, progress, estimate_only) else EXIT_GATE_FAILED)


def _read_and_evaluate(request: EvaluationRequest, progress: bool, estimate_only: bool) -> bool:
    """Evaluate the data, read twice (checked, then scored) and hashed: standard input or a
    pipe is kept in a file meanwhile; whether every gate passed."""
    with readable_data(request.data, sys.stdin.buffer) as (path, label):
        return _evaluate(replace(request, data=path, data_label=label), progress, estimate_only)


def _evaluate(request: EvaluationRequest, progress: bool, estimate_only: bool = False) -> bool:
    """Run the evaluation (or only estimate it) and print it; whether every gate passed."""
    label = request.data_label or printable(str(request.data))
    printed = Printed(label, progress, request.new_run)
    with ScoringRun(request, printed) as evaluation:
        if estimate_only:
            estimate = estimate_evaluation(evaluation)
            division = cluster_division(evaluation, estimate) if request.ray else None
            show_estimate(estimate, evaluation.output, division)
            return True
        if progress and speed_kept(evaluation):
            # the time left starts from the estimate, at the speed measured before
            printed.expected = estimate_evaluation(evaluation, measure=False).per_item
        try:
            outcome = evaluation.run()
        except BudgetSpent as spent:
            way_on = command_to_continue(printed.stopped_run)
            echo(f"Stopped: {spent}. To go on: {way_on}", err=True)
            sys.exit(exit_code_of(spent))
        show(outcome)
        if request.output is not None:
            evaluation.write_results(outcome, request.output)
            echo(f"Results written to {request.output}")
        if outcome.until_decided is not None:
            return decided(evaluation, outcome)
        echo(f"Run {outcome.run.id} saved in {evaluation.store.path}")
        passed = outcome.passed
        comparison = evaluation.compare_with_baseline(outcome)
        if comparison is not None:
            from localeval.reports import history_text

            echo("\n" + history_text.comparison_text(comparison))
            echo("\n" + history_text.regression_text(comparison, request.max_drop))
            passed = passed and not comparison.regressions(request.max_drop)
    return passed


COMMAND = evaluate
