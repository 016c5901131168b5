"""`localeval evaluate`: score a data file into the run history and check the gates."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from localeval.api.defaults import AUTO, DEFAULT_MIN_DEFINED, GATE_ON
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
    translate_errors,
)
from localeval.cli.until_decided import decided, until_decided_options
from localeval.errors import BudgetSpent, UsageError
from localeval.text import printable

if TYPE_CHECKING:
    from localeval.api import Evaluation, EvaluationCost


def __getattr__(name: str) -> Any:
    """`Printed`, the command's events, from the module imported when the command runs."""
    if name == "Printed":
        from localeval.cli._evaluate_events import Printed

        return Printed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    db_path: Any,  # a file or a database URL, as --db read it (None: the default)
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
    # the help is HELP: the flags as the library's keywords, in one call
    import localeval.api as api
    from localeval.cli._evaluate_events import Printed

    if resume is not None and new_run:
        raise UsageError("--resume and --no-resume contradict each other; give one")
    keywords: dict[str, Any] = dict(
        output=output,
        thresholds=thresholds,
        min_defined=min_defined,
        gate_on=gate_on,
        judge=judge_name,
        embedder=embedder_name,
        models=models_path,
        db=api.DEFAULT_DB if db_path is None else db_path,
        resume=False if new_run else True if resume is None else resume,
        baseline=baseline,
        max_drop=max_drop,
        until_decided=until_decided,
        margin=margin,
        use_cache=use_cache,
        state_cache_gb=state_cache_gb,
        skip_invalid=skip_invalid,
        shard=shard,
        max_minutes=max_minutes,
        max_calls=max_calls,
        options=given_metric_options(options),
        ray=ray_settings(ray_address, ray_actors, ray_threads),
        progress=progress,
        keep_models=False,  # one call per process: nothing to keep the models for
    )
    printed = Printed(printable(str(data)), progress, new_run)
    if estimate_only:
        show_cost(api.estimate_cost(data, metrics, events=printed, **keywords))
        sys.exit(EXIT_OK)
    try:
        evaluation = api.evaluate(data, metrics, events=printed, **keywords)
    except BudgetSpent as spent:
        echo(f"Stopped: {spent}. To go on: {command_to_continue(printed.stopped_run)}", err=True)
        sys.exit(exit_code_of(spent))
    show(evaluation, output)
    sys.exit(EXIT_OK if evaluation.passed else EXIT_GATE_FAILED)


def show(evaluation: Evaluation, output: Path | None) -> None:
    """Where the results and the run are, and the verdicts against the baseline (the
    summary was printed as the run finished: Printed.evaluated)."""
    from localeval.reports import history_text

    if output is not None:
        echo(f"Results written to {output}")
    if evaluation.decision is not None:
        decided(evaluation)
        return
    echo(f"Run {evaluation.run_id} saved in {evaluation.db}")
    if evaluation.comparison is not None:
        echo("\n" + history_text.comparison_text(evaluation.comparison))
        echo("\n" + history_text.regression_text(evaluation.comparison, evaluation.max_drop))


def show_cost(cost: EvaluationCost) -> None:
    """--estimate: the estimate's table (with how a Ray cluster's actors divide it, under
    --ray), and where --output wrote it as JSON."""
    from localeval.reports.estimate_text import division_text, estimate_text

    echo(estimate_text(cost.estimate))
    if cost.division is not None:
        echo(division_text(cost.division))
    if cost.written is not None:
        echo(f"Estimate written to {cost.written}")


COMMAND = evaluate
