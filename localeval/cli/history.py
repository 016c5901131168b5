"""Commands over what earlier runs left: the run history, comparisons, reports, the cache.

None of them loads a model."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from localeval.cli.options import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    db_option,
    max_drop_option,
    translate_errors,
)


@click.group("runs")
def runs_group() -> None:
    """The run history: every `localeval evaluate` run, kept in a local SQLite database."""


@runs_group.command("list")
@db_option
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Show this many runs, newest first.",
)
@translate_errors
def runs_list(db_path: Path | None, limit: int) -> None:
    """List the newest runs; an interrupted run is marked INCOMPLETE with how far it got."""
    from localeval.cli.app_history import list_runs

    click.echo(list_runs(db_path, limit))


@runs_group.command("show")
@click.argument("run")
@db_option
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the run's results.json here.",
)
@translate_errors
def runs_show(run: str, db_path: Path | None, output: Path | None) -> None:
    """Show RUN (an id or its start, latest, latest~N): settings, models, summary, gates."""
    from localeval.cli.app_history import show_run

    click.echo(show_run(run, db_path, output))


@click.command()
@click.argument("base")
@click.argument("new")
@db_option
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 if a metric regressed (see --max-drop); for CI.",
)
@max_drop_option
@click.option(
    "--top",
    type=int,
    default=5,
    show_default=True,
    help="How many of the samples that moved most to show per metric, with their evidence.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the comparison as JSON here.",
)
@translate_errors
def diff(
    base: str,
    new: str,
    db_path: Path | None,
    fail_on_regression: bool,
    max_drop: float,
    top: int,
    output: Path | None,
) -> None:
    """Compare run NEW with run BASE: is it better, worse, or is the difference noise?

    BASE and NEW are run ids (or their start), latest, latest~1, ... (complete runs, newest
    first), or results.json files. Per metric: both means, the mean change over the samples
    both runs scored with its paired-bootstrap 95% interval, and a verdict (better / worse /
    no detectable change) read from that interval; the same per category; then the samples
    that moved most, with what changed in their evidence.
    """
    from localeval.cli.app_history import diff_runs

    passed = diff_runs(
        base,
        new,
        db_path=db_path,
        fail_on_regression=fail_on_regression,
        max_drop=max_drop,
        top=top,
        output=output,
    )
    sys.exit(EXIT_OK if passed else EXIT_GATE_FAILED)


@click.command("report")
@click.argument("run", metavar="RUN")
@click.option(
    "-f",
    "--format",
    "report_format",
    type=click.Choice(["html", "md", "junit", "json"]),
    default="html",
    show_default=True,
    help="html: one self-contained page (chart, tables, every sample's evidence); "
    "md: a summary for a pull-request comment; junit: JUnit XML, one test case per gate; "
    "json: the results themselves.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the report here (default: standard output).",
)
@click.option(
    "--baseline",
    metavar="RUN",
    default=None,
    help="A second run to compare with (html and md): its means are drawn beside this run's.",
)
@click.option(
    "--junit-samples",
    is_flag=True,
    help="junit: also one test case per sample, failing when a score is below its gate.",
)
@click.option(
    "--worst",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="md: how many of the worst samples to list.",
)
@db_option
@translate_errors
def report(
    run: str,
    report_format: str,
    output: Path | None,
    baseline: str | None,
    junit_samples: bool,
    worst: int,
    db_path: Path | None,
) -> None:
    """Write a report of a run. RUN is `latest`, `latest~N` or a run id from the history,
    or a results file written by `localeval evaluate --output`.

    Reports are drawn from the stored results alone: no model is loaded and no file named in
    the data is opened. Exit status: 0 written, 2 bad usage or an unreadable results file.
    """
    from localeval.cli.app_history import write_report

    write_report(run, report_format, output, baseline, junit_samples, worst, db_path)


@click.group("cache")
def cache_group() -> None:
    """The cache of judge calls and embeddings (in the run history's database; see --db)."""


@cache_group.command("stats")
@db_option
@translate_errors
def cache_stats_command(db_path: Path | None) -> None:
    """Show how many judge calls and embeddings are cached."""
    from localeval.cli.app_history import describe_cache

    click.echo(describe_cache(db_path))


@cache_group.command("clear")
@click.confirmation_option(prompt="Delete every cached judge call and embedding?")
@db_option
@translate_errors
def cache_clear_command(db_path: Path | None) -> None:
    """Delete every cached judge call and embedding (the run history is kept)."""
    from localeval.cli.app_history import empty_cache

    click.echo(empty_cache(db_path))
