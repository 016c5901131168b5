"""`localeval runs copy`: runs from one database into another (a laptop's file and a team's
PostgreSQL server, either way); a sub-command of `localeval runs` (cli/runs.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from localeval.cli.options import DatabaseLocation, echo, translate_errors
from localeval.errors import CopyFailed, SameDatabase, UsageError

if TYPE_CHECKING:
    from localeval.api import Location


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
    from localeval.api import History

    try:
        with History(source) as history:
            done = history.copy_to(target, refs)
    except SameDatabase:
        raise click.UsageError(
            "--from and --to name the same database; give the other one"
        ) from None
    except CopyFailed as exc:
        raise _with_option(exc, "--from" if exc.side == "source" else "--to") from None
    for run_id in done.copied:
        echo(f"Copied run {run_id} to {done.target}")
    for run_id in done.present:
        echo(f"Run {run_id} is in {done.target} already, with the same content")
    if done.labels_added:
        echo(f"Added {done.labels_added} labels made since the last copy")
    if done.undos_added:
        echo(f"Undid {done.undos_added} labels undone since the last copy")


def _with_option(exc: UsageError, option: str) -> UsageError:
    """The store's message advises --db, the option of every other command; here the
    database is named by --from or --to."""
    text = str(exc).replace("--db PATH / set LOCALEVAL_DB", f"{option} / set LOCALEVAL_DB")
    for advice in ("--db URL", "--db PATH", "another --db"):
        text = text.replace(advice, advice.replace("--db", option))
    return UsageError(text)
