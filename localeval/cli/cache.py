"""`localeval cache stats|clear`: the cache of judge calls and embeddings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from localeval.cli.options import db_option, echo, translate_errors

if TYPE_CHECKING:
    from localeval.database import Location


@click.group("cache")
def cache_group() -> None:
    """The cache of judge calls and embeddings (in the run history's database; see --db)."""


@cache_group.command("stats")
@db_option
@translate_errors
def cache_stats_command(db_path: Location | None) -> None:
    """Show how many judge calls and embeddings are cached."""
    from localeval.database import default_db_path
    from localeval.tools.cache import cache_connection, cache_stats

    with cache_connection(db_path, readonly=True) as connection:
        stats = cache_stats(connection)
    echo("\n".join([f"database: {db_path or default_db_path()}", *stats.lines()]))


@cache_group.command("clear")
@click.confirmation_option(prompt="Delete every cached judge call and embedding?")
@db_option
@translate_errors
def cache_clear_command(db_path: Location | None) -> None:
    """Delete every cached judge call and embedding (the run history is kept)."""
    from localeval.tools.cache import cache_connection, clear_cache

    with cache_connection(db_path) as connection:
        judged, embedded = clear_cache(connection)
    echo(f"Deleted {judged} cached judge calls and {embedded} cached embeddings.")


COMMAND = cache_group
