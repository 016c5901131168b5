"""`localeval diff`: is one run better or worse than another, or is the difference noise?"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from localeval.cli.exit_codes import EXIT_GATE_FAILED, EXIT_OK
from localeval.cli.options import (
    db_option,
    echo,
    max_drop_option,
    output_option,
    translate_errors,
    warn_if_replaced,
)

if TYPE_CHECKING:
    from localeval.api import Location


@click.command()
@click.argument("base")
@click.argument("new")
@db_option
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 if a metric regressed (see --max-drop); for CI.",
)
@max_drop_option
@click.option(
    "--top",
    type=int,
    default=5,
    show_default=True,
    help="How many of the samples that moved most to show per metric, with their evidence.",
)
@output_option("Also write the comparison as JSON here.")
@translate_errors
def diff(
    base: str,
    new: str,
    db_path: Location | None,
    fail_on_regression: bool,
    max_drop: float,
    top: int,
    output: Path | None,
) -> None:
    """Compare run NEW with run BASE: is it better, worse, or is the difference noise?

    BASE and NEW are run ids (or their start), latest, latest~1, ... (complete runs, newest
    first), or results.json files. Per metric: both means, the mean change over the samples
    both runs scored with its paired-bootstrap 95% interval, and a verdict (better / worse /
    no detectable change) read from that interval; the same per category; then the samples
    that moved most, with what changed in their evidence.
    """
    from localeval.api import History
    from localeval.reports import history_text

    with History(db_path) as history:
        comparison = history.diff(
            base, new, top=top, max_drop=max_drop, output=output, on_output=warn_if_replaced
        )
    echo(history_text.comparison_text(comparison))
    passed = True
    if fail_on_regression:
        echo("\n" + history_text.regression_text(comparison, max_drop))
        passed = not comparison.regressions(max_drop)
    if output is not None:
        echo(f"Comparison written to {output}")
    sys.exit(EXIT_OK if passed else EXIT_GATE_FAILED)


COMMAND = diff
