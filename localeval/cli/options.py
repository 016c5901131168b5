"""What every localeval command shares: error translation to SPEC.md's exit codes, and the
options several commands take."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from localeval.errors import LocalevalError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_GATE_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def translate_errors(command: F) -> F:
    """Turn library errors into a one-line message and SPEC.md's exit codes; never a traceback
    unless LOCALEVAL_DEBUG is set."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except LocalevalError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except Exception as exc:  # anything else is our bug: say so plainly
            if os.environ.get("LOCALEVAL_DEBUG"):
                traceback.print_exc()
            click.echo(
                f"Internal error: {type(exc).__name__}: {exc} "
                "(set LOCALEVAL_DEBUG=1 for the traceback)",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Database of the run history and the judge/embedding cache (default: $LOCALEVAL_DB, "
    "else .localeval/localeval.db in the working folder).",
)

max_drop_option = click.option(
    "--max-drop",
    type=float,
    default=0.02,
    show_default=True,
    help="Regression gate tolerance: a metric fails only if it dropped by more than this "
    "AND the 95% interval of the change excludes zero.",
)

models_option = click.option(
    "--models",
    "models_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="models.toml to use (default: $LOCALEVAL_MODELS, ./models.toml, or the project's).",
)

judge_option = click.option(
    "--judge", "judge_name", default=None, help="Judge model name from models.toml."
)

embedder_option = click.option(
    "--embedder", "embedder_name", default=None, help="Embedding model name from models.toml."
)

progress_option = click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Show progress and the time left on stderr.",
)


def cache_option(help_text: str) -> Callable[[F], F]:
    """--cache/--no-cache, with what the cache saves in this command."""
    return click.option(
        "--cache/--no-cache", "use_cache", default=True, show_default=True, help=help_text
    )


def output_option(help_text: str) -> Callable[[F], F]:
    """-o/--output FILE, with what this command writes there."""
    return click.option(
        "-o", "--output", type=click.Path(path_type=Path), default=None, help=help_text
    )
