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
    from localeval.database import Location
    from localeval.history.records import StoredRun
    from localeval.history.store import RunStore


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
    from localeval.database import default_db_path, store_exists, store_file
    from localeval.history.store import RunStore
    from localeval.reports import history_text

    path = db_path or default_db_path()
    if not store_exists(path):
        missing = "does not exist" if store_file(path) is not None else "holds no run history yet"
        echo(f"No runs yet: {path} {missing}. `localeval evaluate DATA` records one.")
        return
    with RunStore.open(path, readonly=True) as store:
        echo(history_text.runs_table(store.list_runs(limit)))


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
    from localeval.database import database_files, default_db_path
    from localeval.evaluation.sources import stored_report, stored_view
    from localeval.history.store import open_history
    from localeval.reports import console, history_text
    from localeval.results.contract import check_output, write_results
    from localeval.results.gates import GateResult

    target = None
    if output is not None:
        target = check_output(output, database_files(db_path or default_db_path()))
        warn_if_replaced(target)
    with open_history(db_path) as store:
        stored = store.resolve(run)
        view = stored_view(store, stored)
        parts = [history_text.run_description(stored), console.run_summary(view)]
        if any(gate.metric in view.corrected for gate in view.gates):
            recorded = [GateResult.from_dict(gate) for gate in stored.gates or []]
            parts.append(history_text.gates_read_again(view.gates, recorded, view.corrected))
        if target is not None:
            write_results(target, *stored_report(store, stored))
            parts.append(f"Results written to {output}")
        echo("\n\n".join(parts))


def _deleted(store: RunStore, runs: list[StoredRun], yes: bool, with_labels: bool) -> None:
    """Confirm (unless --yes), delete, and say what was deleted and what the file shrank to."""
    from localeval.history.cleanup import delete_runs, label_counts
    from localeval.reports import history_text

    if not runs:
        echo("No run to delete.")
        return
    echo(history_text.runs_table(runs))
    if not yes:
        what = "their samples and scores"
        if n_labels := sum(label_counts(store, runs).values()):
            what = (
                f"their samples, scores and the {n_labels} labels your team made of them "
                "(labels cannot be computed again)"
            )
        click.confirm(f"Delete these {len(runs)} runs with {what}?", abort=True)
    before, after = delete_runs(store, runs, with_labels)
    sizes = ""
    if before is not None and after is not None:  # a server's database: no file to measure
        sizes = f": {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB"
    echo(f"Deleted {len(runs)} run{'s' * (len(runs) != 1)}; {store.path}{sizes}")


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
    from localeval.history.cleanup import runs_to_delete
    from localeval.history.store import open_history

    with open_history(db_path, writable=True) as store:
        _deleted(store, runs_to_delete(store, refs, with_labels), yes, with_labels)


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
    from localeval.history.cleanup import plan_pruning
    from localeval.history.store import open_history

    with open_history(db_path, writable=True) as store:
        plan = plan_pruning(store, keep, with_labels)
        for run in plan.busy:
            echo(f"Kept run {run.id}: a live process is writing it.", err=True)
        for run, n_labels in plan.labelled:
            echo(
                f"Kept run {run.id}: it holds {n_labels} labels of your team "
                "(--with-labels deletes it with them).",
                err=True,
            )
        _deleted(store, plan.delete, yes, with_labels)


@runs_group.command("merge")
@click.argument("runs", nargs=-1, required=True)
@db_option
@output_option("Write the merged run's results.json here.")
@translate_errors
def runs_merge(runs: tuple[str, ...], db_path: Location | None, output: Path | None) -> None:
    """Join the shards of one evaluation (`evaluate --shard K/N`, each RUN an id, latest~N
    or a results.json file) into one run, with the summary, intervals and gates of a
    single run over all samples. Exit status: 0 all gates pass, 1 a gate failed."""
    from localeval.cli.options import EXIT_GATE_FAILED, EXIT_OK
    from localeval.database import default_db_path
    from localeval.evaluation.merge import check_merge_output, merge_shards
    from localeval.history.store import RunStore, open_history
    from localeval.reports import console
    from localeval.results.refs import RunRef

    if output is not None:  # before the database is opened (or created)
        warn_if_replaced(check_merge_output(runs, db_path or default_db_path(), output))
    # shards of the history need one already; results files alone may start it
    stored = any(RunRef(ref).in_history for ref in runs)
    with open_history(db_path, writable=True) if stored else RunStore.open(db_path) as store:
        outcome = merge_shards(runs, store, output)
        for warning in outcome.warnings:
            echo(f"Warning: {warning}", err=True)
        echo(console.run_summary(outcome.view))
        if output is not None:
            echo(f"Results written to {output}")
        echo(f"Merged {len(runs)} shards into run {outcome.run.id} in {store.path}")
    sys.exit(EXIT_OK if outcome.passed else EXIT_GATE_FAILED)


runs_group.add_command(runs_copy)

COMMAND = runs_group
