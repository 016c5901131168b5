"""`localeval cache stats|clear`: the cache of judge calls and embeddings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from localeval.cli.options import db_option, echo, translate_errors

if TYPE_CHECKING:
    from localeval.database import Location


@click.group("cache")
def cache_group() -> None:
    """The cache of judge calls and embeddings (in the run history's database; see --db), and
    the llama.cpp judge's context states (in the user's cache folder)."""


@cache_group.command("stats")
@db_option
@translate_errors
def cache_stats_command(db_path: Location | None) -> None:
    """Show how many judge calls, embeddings and context states are cached."""
    from localeval.backends.llama_states import store_stats
    from localeval.database import default_db_path
    from localeval.tools.cache import cache_connection, cache_file_missing, cache_stats

    where = db_path or default_db_path()
    lines = [f"database: {where}"]
    if not cache_file_missing(where):
        with cache_connection(where, readonly=True) as connection:
            lines += cache_stats(connection).lines()
    else:
        lines.append("nothing cached: the database does not exist yet")
    echo("\n".join([*lines, *store_stats().lines()]))


@cache_group.command("clear")
@click.confirmation_option(prompt="Delete every cached judge call, embedding and context state?")
@db_option
@translate_errors
def cache_clear_command(db_path: Location | None) -> None:
    """Delete every cached judge call, embedding and context state (the run history is kept)."""
    from localeval.backends.llama_states import clear_store
    from localeval.database import default_db_path
    from localeval.tools.cache import cache_connection, cache_file_missing, clear_cache

    judged = embedded = 0
    if not cache_file_missing(db_path or default_db_path()):  # none made: nothing to clear
        with cache_connection(db_path) as connection:
            judged, embedded = clear_cache(connection)
    states = clear_store()
    echo(
        f"Deleted {judged} cached judge calls, {embedded} cached embeddings and {states} "
        "context states."
    )


COMMAND = cache_group
