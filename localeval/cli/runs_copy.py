"""`localeval runs copy`: runs from one database into another (a laptop's file and a team's
PostgreSQL server, either way); a sub-command of `localeval runs` (cli/runs.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from localeval.cli.options import DatabaseLocation, echo, translate_errors

if TYPE_CHECKING:
    from localeval.database import Location


@click.command("copy")
@click.argument("refs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "--from",
    "source",
    type=DatabaseLocation(),
    default=None,
    help="The database the runs are in: a file or postgresql://USER@HOST:PORT/DBNAME "
    "(default: $LOCALEVAL_DB, else .localeval/localeval.db).",
)
@click.option(
    "--to",
    "target",
    type=DatabaseLocation(),
    default=None,
    help="The database to copy them into, created or migrated if need be (default: as for "
    "--from; give at least one of the two).",
)
@translate_errors
def runs_copy(refs: tuple[str, ...], source: Location | None, target: Location | None) -> None:
    """Copy complete runs (ids or their start, latest, latest~N, as --from names them) with
    their samples, scores, evidence and labels into another database, all or none. Copying
    again changes nothing (labels made since are added); a run id the target holds with
    other content is refused, never overwritten."""
    from localeval.database import default_db_path
    from localeval.runs.copying import copy_runs, runs_to_copy
    from localeval.runs.history import RunStore
    from localeval.runs.sources import open_history

    source, target = source or default_db_path(), target or default_db_path()
    if str(source) == str(target):
        raise click.UsageError("--from and --to name the same database; give the other one")
    reading = open_history(source)
    try:
        runs = runs_to_copy(reading, refs)
        writing = RunStore.open(target)
        try:
            done = copy_runs(reading, writing, runs)
        finally:
            writing.close()
    finally:
        reading.close()
    for run_id in done.copied:
        echo(f"Copied run {run_id} to {target}")
    for run_id in done.present:
        echo(f"Run {run_id} is in {target} already, with the same content")
    if done.labels_added:
        echo(f"Added {done.labels_added} labels made since the last copy")
