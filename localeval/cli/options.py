"""What every localeval command shares: printing (every line through `echo`, which makes
text from data safe for a terminal), error translation to the exit codes (docs/reference.md),
stopping on SIGTERM as on Ctrl-C, and the options several commands take."""

from __future__ import annotations

import functools
import math
import os
import shlex
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

import click

from localeval.cli.exit_codes import EXIT_GATE_FAILED as EXIT_GATE_FAILED  # re-exported
from localeval.cli.exit_codes import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_TERMINATED, exit_code_of
from localeval.cli.exit_codes import EXIT_OK as EXIT_OK  # re-exported
from localeval.errors import LocalevalError, parameters_named, rendered
from localeval.text import printable

if TYPE_CHECKING:
    from localeval.api import OutputTarget

F = TypeVar("F", bound=Callable[..., Any])

#: where the command group keeps the words the command line was given (click's ctx.meta)
ARGV = "localeval.argv"


#: the flag of each parameter whose Python spelling is no option's name (dest) in any command
IRREGULAR_FLAGS = {"resume=False": "--no-resume", "estimate_cost()": "--estimate"}


def flag_of(name: str) -> str:
    """The command line's flag for the library's parameter `name` (the Python keyword,
    or spelling, a message names it by; "fit=True" is the switch --fit): the table's, else
    the flag of the running command's option of that name (`thresholds` is --threshold,
    `new_run` --no-resume, `metrics` --metric), else the keyword in flag form
    (`until_decided` is --until-decided)."""
    if name in IRREGULAR_FLAGS:
        return IRREGULAR_FLAGS[name]
    name = name.removesuffix("=True")
    context = click.get_current_context(silent=True)
    for option in context.command.params if context is not None else ():
        if isinstance(option, click.Option) and option.name == name:
            return max(option.opts, key=len)  # "--output" of -o/--output
    return "--" + name.replace("_", "-")


def command_to_continue(
    run_id: str | None, flags: Sequence[str] = (), options: Sequence[str] = ()
) -> str:
    """This command as it was typed, to paste to continue the run `run_id`: every option
    that identifies the run kept, less the `flags` and the `options` (with their values)
    that would stop it again, and with --resume RUN where --no-resume would start another."""
    context = click.get_current_context(silent=True)
    typed = context.meta.get(ARGV) if context is not None else None
    words = list(typed if typed is not None else sys.argv[1:])
    kept: list[str] = []
    skip = False
    for word in words:
        name = word.split("=", 1)[0]
        if skip:
            skip = False
        elif word in flags:
            continue
        elif name in options:
            skip = "=" not in word  # "--margin 0.1": its value is the next word
        elif word == "--no-resume" and run_id is not None:
            kept += ["--resume", run_id]
        else:
            kept.append(word)
    return shlex.join(["localeval", *kept])


def echo(message: object = "", err: bool = False, nl: bool = True) -> None:
    """click.echo, with every character a terminal would act on (an escape sequence in a
    category, a bidi override, a byte of a file name that is not UTF-8) shown as an escape:
    much of what localeval prints comes from data, and it is printed the same on a terminal
    or not."""
    try:
        text = rendered(str(message), flag_of)  # a library message's parameters, as flags
        click.echo(printable(text, keep_lines=True), err=err, nl=nl)
    except BrokenPipeError:
        silence_closed_stream(sys.stderr if err else sys.stdout)


def silence_closed_stream(stream: Any) -> None:
    """A reader that stopped reading (`| head -1`) is normal in a shell: what is left to
    print goes nowhere, and the command goes on to its own exit code. The descriptor itself
    points at /dev/null, so the interpreter's flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):  # no descriptor (a test's captured stream): nothing to keep
        pass
    finally:
        os.close(devnull)


def warn_if_replaced(target: OutputTarget | None) -> None:
    """-o onto an existing file replaces it: said before the work, on stderr."""
    if target is not None and target.replaces:
        echo(f"Warning: --output {target.path} exists; it will be overwritten", err=True)


class Share(click.FloatRange):
    """A number from 0 to 1; click's FloatRange alone lets NaN through (no comparison with it
    is false), which then means no bound at all."""

    def __init__(self) -> None:
        super().__init__(0, 1)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value} is not in the range 0<=x<=1.", param, ctx)
        return number


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI sends at a time-out), raised where Ctrl-C would be, so that a stopped
    run is kept and reported the same way."""


#: set once SIGTERM arrived: code that catches the KeyboardInterrupt and raises one of its
#: own (Ray's, where the signal lands in its wait) loses the Terminated type, not this
_SIGTERM_RECEIVED = threading.Event()


def _terminate(signum: int, frame: FrameType | None) -> None:
    _SIGTERM_RECEIVED.set()
    raise Terminated()


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises Terminated while a command runs (in the main thread, where signal
    handlers live); the previous handler is back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _SIGTERM_RECEIVED.clear()
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def translate_errors(command: F) -> F:
    """Turn library errors into a one-line message and their exit codes (docs/reference.md);
    never a traceback unless LOCALEVAL_DEBUG is set. While the command runs, the library's
    messages name each parameter by its flag (`flag_of`)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with parameters_named(flag_of):  # the message of an error too
            return _translated(command, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _translated(command: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The command's return value; its error as a message and an exit code."""
    try:
        with _sigterm_as_interrupt():
            return command(*args, **kwargs)
    except LocalevalError as exc:
        if os.environ.get("LOCALEVAL_DEBUG") and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__)  # a plugin's own error, say
        echo(f"Error: {exc}", err=True)
        sys.exit(exit_code_of(exc))
    except KeyboardInterrupt as stop:
        if isinstance(stop, Terminated) or _SIGTERM_RECEIVED.is_set():
            echo("Terminated.", err=True)
            sys.exit(EXIT_TERMINATED)
        echo("Interrupted.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
        raise
    except Exception as exc:  # anything else is our bug: say so plainly
        if os.environ.get("LOCALEVAL_DEBUG"):
            traceback.print_exc()
        echo(
            f"Internal error: {type(exc).__name__}: {exc} "
            "(set LOCALEVAL_DEBUG=1 for the traceback)",
            err=True,
        )
        sys.exit(EXIT_INTERNAL)


class DatabaseLocation(click.ParamType):
    """--db: a file (not a folder), or a PostgreSQL URL or libpq connection string without
    a password."""

    name = "PATH|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from localeval.api import Location, db_location

        if isinstance(value, Location):  # given in code, already read
            return value
        try:
            location, file = db_location(str(value))
        except LocalevalError as exc:
            with parameters_named(flag_of):  # read before the command runs
                self.fail(str(exc), param, ctx)
        if file is None:
            return location
        return click.Path(dir_okay=False, path_type=Path).convert(value, param, ctx)


db_option = click.option(
    "--db",
    "db_path",
    type=DatabaseLocation(),
    default=None,
    help="Database of the run history and the judge/embedding cache: a file, or a team's "
    "PostgreSQL database as postgresql://USER@HOST:PORT/DBNAME (or a libpq connection "
    "string, 'host=... dbname=...'), its password from PGPASSWORD, ~/.pgpass or PGSERVICE "
    "(default: $LOCALEVAL_DB, else .localeval/localeval.db in the working folder).",
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
