"""`localeval doctor`: whether this install can evaluate here with no network."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from localeval.cli.exit_codes import EXIT_GATE_FAILED, EXIT_OK
from localeval.cli.options import db_option, echo, models_option, translate_errors

if TYPE_CHECKING:
    from localeval.api import Location


@click.command("doctor")
@models_option
@db_option
@translate_errors
def doctor_command(models_path: str | None, db_path: Location | None) -> None:
    """Check that this install can evaluate here with no network: the models (present,
    sha256), the llama.cpp build (proven on this CPU by a real decode), the embedder
    (loaded offline), the cache and history folders (writable) and the run history's store
    (reachable). Creates nothing. Exit status: 0 all hold, 1 something does not (each line
    says what to do), 2 bad usage."""
    from localeval.api import check_install

    found = check_install(models_path, db_path)
    width = max(len(check.name) for check in found.checks)
    for check in found.checks:
        echo(f"{'ok' if check.ok else 'NO':<3} {check.name:<{width}}  {check.found}")
        if not check.ok and check.remedy:
            echo(f"    {'':<{width}}  to do: {check.remedy}")
    if found.ok:
        echo("\nReady: this install can evaluate here with no network.")
    else:
        echo(f"\nNot ready: {len(found.failed)} of {len(found.checks)} checks failed.")
    sys.exit(EXIT_OK if found.ok else EXIT_GATE_FAILED)


COMMAND = doctor_command
