"""`localeval cache stats|clear`: the cache of judge calls and embeddings."""

from __future__ import annotations

from pathlib import Path

import click

from localeval.cli.options import db_option, echo, translate_errors


@click.group("cache")
def cache_group() -> None:
    """The cache of judge calls and embeddings (in the run history's database; see --db)."""


@cache_group.command("stats")
@db_option
@translate_errors
def cache_stats_command(db_path: Path | None) -> None:
    """Show how many judge calls and embeddings are cached."""
    from localeval.runs.cache import cache_stats
    from localeval.runs.database import default_db_path, open_store

    stats = cache_stats(open_store(db_path, readonly=True))
    echo("\n".join([f"database: {db_path or default_db_path()}", *stats.lines()]))


@cache_group.command("clear")
@click.confirmation_option(prompt="Delete every cached judge call and embedding?")
@db_option
@translate_errors
def cache_clear_command(db_path: Path | None) -> None:
    """Delete every cached judge call and embedding (the run history is kept)."""
    from localeval.runs.cache import clear_cache
    from localeval.runs.database import open_store

    judged, embedded = clear_cache(open_store(db_path))
    echo(f"Deleted {judged} cached judge calls and {embedded} cached embeddings.")


COMMAND = cache_group
