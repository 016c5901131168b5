"""The localeval command line: one module per command, each a library call plus printing.

A module of this package that defines `COMMAND` (a click command or group) is a command:
adding one is adding that module. Commands are entries of the entry-point group
`localeval.commands` (localeval.extensions): an installed package adds its own there, each
entry naming a module that defines `COMMAND` (or the command itself), and this package's
modules are entries of the same group. Only this package prints and chooses exit codes.
"""

from __future__ import annotations

import pkgutil
from importlib.metadata import EntryPoint
from types import ModuleType

import click

from localeval import extensions
from localeval.api.defaults import PLUGIN_PROBLEMS
from localeval.cli.options import ARGV, echo
from localeval.offline import hold_offline
from localeval.version import __version__


class _LocalevalGroup(click.Group):
    """The command group, keeping the words it was given (`ctx.meta["argv"]`): a hint to
    run a command again is that command as typed, whether from a shell or CliRunner."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta.setdefault(ARGV, list(args))
        return super().parse_args(ctx, args)


@click.group(cls=_LocalevalGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="localeval")
def main() -> None:
    """Evaluate retrieval-augmented generation offline, with local judge and embedding models.

    Start with `localeval evaluate DATA`; `localeval models` shows which models are set up.
    """
    hold_offline()  # before any command can import the Hugging Face libraries
    for problem in [*PLUGIN_PROBLEMS.values(), *COMMAND_PROBLEMS]:
        echo(f"Warning: {problem}", err=True)


def _command(loaded: object) -> click.Command | None:
    """The command an entry names: the module's `COMMAND`, or the command itself."""
    found = getattr(loaded, "COMMAND", None) if isinstance(loaded, ModuleType) else loaded
    return found if isinstance(found, click.Command) else None


def _built_in() -> list[EntryPoint]:
    """This package's command modules as entries of the group (__main__ is none: it runs
    the command line when imported)."""
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    return extensions.built_in(extensions.COMMANDS, {n: f"{__name__}.{n}" for n in names})


def _add_commands() -> list[str]:
    """Every command onto `main`, the built-in ones first; the one line that says why, for
    each installed command that cannot be added."""
    for entry in _built_in():
        if (command := _command(entry.load())) is not None:
            main.add_command(command)
    problems = []
    for entry in extensions.installed(extensions.COMMANDS):
        found = _plugin_command(entry)
        if isinstance(found, str):
            problems.append(found)
        else:
            main.add_command(found)
    return problems


def _plugin_command(entry: EntryPoint) -> click.Command | str:
    """An installed entry's command, or the line that says why it cannot be added."""
    where = f"command plugin '{entry.name}' ({entry.value})"
    loaded, problem = extensions.load(entry, where)
    command = _command(loaded)
    if problem is not None:
        return problem
    if command is None:
        return f"{where} defines no COMMAND (a click command)"
    if command.name in main.commands:
        return f"{where} is named like the command '{command.name}'; rename it"
    return command


#: one line per installed command left out, shown as a warning by every command
COMMAND_PROBLEMS = _add_commands()
