"""The localeval command line: one module per command, each a library call plus printing.

A module of this package that defines `COMMAND` (a click command or group) is a command:
adding one is adding that module. Only this package prints and chooses exit codes.
"""

from __future__ import annotations

import importlib
import pkgutil

import click

from localeval import __version__
from localeval.cli.options import ARGV, echo
from localeval.metrics import PLUGIN_PROBLEMS
from localeval.offline import hold_offline


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
    for problem in PLUGIN_PROBLEMS.values():
        echo(f"Warning: {problem}", err=True)


for _module in pkgutil.iter_modules(__path__):
    if _module.name.startswith("_"):
        continue  # __main__ runs the command line when imported
    _command = getattr(importlib.import_module(f"{__name__}.{_module.name}"), "COMMAND", None)
    if isinstance(_command, click.Command):
        main.add_command(_command)
