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
    from localeval.database import Location


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
    from localeval.database import database_files, default_db_path
    from localeval.errors import UsageError
    from localeval.evaluation.sources import history_for, load_scores
    from localeval.reports import history_text
    from localeval.results.contract import check_output, write_json
    from localeval.results.diff import compare_runs
    from localeval.results.gates import check_max_drop
    from localeval.results.refs import RunRef

    check_max_drop(max_drop)
    if top < 0:
        raise UsageError(f"--top {top}: must be 0 or more")
    refs = [RunRef(base), RunRef(new)]
    target = None
    if output is not None:
        inputs = [(ref.path, "a results file compared") for ref in refs if ref.path is not None]
        target = check_output(output, inputs + database_files(db_path or default_db_path()))
        warn_if_replaced(target)
    with history_for(refs, db_path) as store:
        comparison = compare_runs(load_scores(refs[0], store), load_scores(refs[1], store), top)
    echo(history_text.comparison_text(comparison))
    passed = True
    if fail_on_regression:
        echo("\n" + history_text.regression_text(comparison, max_drop))
        passed = not comparison.regressions(max_drop)
    if output is not None:
        write_json(target or output, comparison.as_dict())
        echo(f"Comparison written to {output}")
    sys.exit(EXIT_OK if passed else EXIT_GATE_FAILED)


COMMAND = diff
