"""`localeval cache stats|clear`: the cache of judge calls and embeddings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from localeval.cli.options import db_option, echo, translate_errors

if TYPE_CHECKING:
    from localeval.api import Location


@click.group("cache")
def cache_group() -> None:
    """The cache of judge calls and embeddings (in the run history's database; see --db), and
    the llama.cpp judge's context states (in the user's cache folder)."""


@cache_group.command("stats")
@db_option
@translate_errors
def cache_stats_command(db_path: Location | None) -> None:
    """Show how many judge calls, embeddings and context states are cached."""
    from localeval.api import StateCache

    echo("\n".join(StateCache(db_path).stats().lines()))


@cache_group.command("clear")
@click.confirmation_option(prompt="Delete every cached judge call, embedding and context state?")
@db_option
@translate_errors
def cache_clear_command(db_path: Location | None) -> None:
    """Delete every cached judge call, embedding and context state (the run history is kept)."""
    from localeval.api import StateCache

    cleared = StateCache(db_path).clear()
    echo(
        f"Deleted {cleared.judge_calls} cached judge calls, {cleared.embeddings} cached "
        f"embeddings and {cleared.states} context states."
    )


COMMAND = cache_group
