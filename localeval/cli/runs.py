"""`localeval runs list|show|delete|prune|merge|copy`: the run history, kept in the run
database (an SQLite file, or a team's PostgreSQL database)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from localeval.cli.options import (
    db_option,
    echo,
    output_option,
    translate_errors,
    warn_if_replaced,
)
from localeval.cli.runs_copy import runs_copy

if TYPE_CHECKING:  # imported where used: `localeval --help` stays quick
    from collections.abc import Callable

    from localeval.api import Deletion, Location


@click.group("runs")
def runs_group() -> None:
    """The run history: every `localeval evaluate` run, kept in the run database (--db: a
    local SQLite file, or a team's PostgreSQL database)."""


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
def runs_list(db_path: Location | None, limit: int) -> None:
    """List the newest runs; an interrupted run is marked INCOMPLETE with how far it got."""
    from localeval.api import History
    from localeval.errors import NoRunHistory
    from localeval.reports import history_text

    try:
        with History(db_path) as history:
            runs = history.runs(limit)
    except NoRunHistory as missing:
        echo(
            f"No runs yet: {missing.location} {missing.absence}. "
            "`localeval evaluate DATA` records one."
        )
        return
    echo(history_text.runs_table(runs))


@runs_group.command("show")
@click.argument("run")
@db_option
@output_option("Also write the run's results.json here.")
@translate_errors
def runs_show(run: str, db_path: Location | None, output: Path | None) -> None:
    """Show RUN (an id or its start, latest, latest~N): settings, models, summary, gates.
    The gates are read again with the labels as they are now (`localeval review`, `labels
    import`, labels carried over from earlier runs), each the way its --gate-on asked, and
    each says which mean it read. Exit status 0: it shows, whatever the gates say (gate in
    CI with `evaluate`, which reads the same labels)."""
    from localeval.api import History
    from localeval.reports import console, history_text

    with History(db_path) as history:
        shown = history.show(run, output=output, on_output=warn_if_replaced)
    parts = [history_text.run_description(shown.run), console.run_summary(shown.view)]
    if shown.gates_read_again:
        view = shown.view
        parts.append(
            history_text.gates_read_again(view.gates, shown.recorded_gates, view.corrected)
        )
    if output is not None:
        parts.append(f"Results written to {output}")
    echo("\n\n".join(parts))


def _confirming(yes: bool) -> Callable[[Deletion], bool]:
    """What `runs delete` and `runs prune` show before deleting: the runs a prune keeps and
    why, then the runs to delete, and (unless --yes) a question."""

    def confirm(plan: Deletion) -> bool:
        from localeval.reports import history_text

        for run in plan.busy:
            echo(f"Kept run {run.id}: a live process is writing it.", err=True)
        for run, n_labels in plan.labelled:
            echo(
                f"Kept run {run.id}: it holds {n_labels} labels of your team "
                "(--with-labels deletes it with them).",
                err=True,
            )
        if not plan.runs:
            return False
        echo(history_text.runs_table(plan.runs))
        if not yes:
            what = "their samples and scores"
            if plan.n_labels:
                what = (
                    f"their samples, scores and the {plan.n_labels} labels your team made of "
                    "them (labels cannot be computed again)"
                )
            click.confirm(f"Delete these {len(plan.runs)} runs with {what}?", abort=True)
        return True

    return confirm


def _said(done: Deletion) -> None:
    """What was deleted and what the file shrank to."""
    if not done.deleted:
        echo("No run to delete.")
        return
    n_runs, before, after = len(done.runs), done.size_before, done.size_after
    sizes = ""
    if before is not None and after is not None:  # a server's database: no file to measure
        sizes = f": {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB"
    echo(f"Deleted {n_runs} run{'s' * (n_runs != 1)}; {done.location}{sizes}")


yes_option = click.option("-y", "--yes", is_flag=True, help="Delete without asking (for scripts).")
with_labels_option = click.option(
    "--with-labels",
    is_flag=True,
    help="Also delete runs your team labelled (`localeval review`, `labels import`), with "
    "their labels, which cannot be computed again (`labels export` keeps them in a file).",
)


@runs_group.command("delete")
@click.argument("refs", metavar="RUN...", nargs=-1, required=True)
@db_option
@yes_option
@with_labels_option
@translate_errors
def runs_delete(
    refs: tuple[str, ...], db_path: Location | None, yes: bool, with_labels: bool
) -> None:
    """Delete runs (ids or their start, latest, latest~N) from the history, with their
    samples and scores; the database file shrinks accordingly. A run a live process is
    writing is refused, and so is a run your team labelled, unless --with-labels. The
    judge/embedding cache is kept (see `localeval cache clear`)."""
    from localeval.api import History

    with History(db_path) as history:
        _said(history.delete(refs, with_labels=with_labels, confirm=_confirming(yes)))


@runs_group.command("prune")
@click.option(
    "--keep",
    type=int,
    required=True,
    metavar="N",
    help="How many of the newest runs (by start) to keep.",
)
@db_option
@yes_option
@with_labels_option
@translate_errors
def runs_prune(keep: int, db_path: Location | None, yes: bool, with_labels: bool) -> None:
    """Delete every run but the N newest, complete or not, except runs a live process is
    writing and, unless --with-labels, runs your team labelled; the database file shrinks
    accordingly."""
    from localeval.api import History

    with History(db_path) as history:
        _said(history.prune(keep, with_labels=with_labels, confirm=_confirming(yes)))


@runs_group.command("merge")
@click.argument("runs", nargs=-1, required=True)
@db_option
@output_option("Write the merged run's results.json here.")
@translate_errors
def runs_merge(runs: tuple[str, ...], db_path: Location | None, output: Path | None) -> None:
    """Join the shards of one evaluation (`evaluate --shard K/N`, each RUN an id, latest~N
    or a results.json file) into one run, with the summary, intervals and gates of a
    single run over all samples. Exit status: 0 all gates pass, 1 a gate failed."""
    from localeval.api import History
    from localeval.cli.options import EXIT_GATE_FAILED, EXIT_OK
    from localeval.reports import console

    with History(db_path) as history:
        outcome = history.merge(runs, output=output, on_output=warn_if_replaced)
    for warning in outcome.warnings:
        echo(f"Warning: {warning}", err=True)
    echo(console.run_summary(outcome.view))
    if output is not None:
        echo(f"Results written to {output}")
    echo(f"Merged {len(runs)} shards into run {outcome.run.id} in {history.location}")
    sys.exit(EXIT_OK if outcome.passed else EXIT_GATE_FAILED)


runs_group.add_command(runs_copy)

COMMAND = runs_group
