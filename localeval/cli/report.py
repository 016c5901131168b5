"""`localeval report`: a run's report as HTML, Markdown, JUnit XML or JSON."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from localeval.cli.options import (
    db_option,
    echo,
    output_option,
    translate_errors,
    warn_if_replaced,
)

if TYPE_CHECKING:
    from localeval.api import Location


@click.command("report")
@click.argument("run", metavar="RUN")
@click.option(
    "-f",
    "--format",
    "report_format",
    type=click.Choice(["html", "md", "junit", "json"]),
    default="html",
    show_default=True,
    help="html: one self-contained page (chart, tables, every sample's evidence); "
    "md: a summary for a pull-request comment; junit: JUnit XML, one test case per gate; "
    "json: the results themselves.",
)
@output_option("Write the report here (default: standard output).")
@click.option(
    "--baseline",
    metavar="RUN",
    default=None,
    help="A second run to compare with (html and md): its means are drawn beside this run's.",
)
@click.option(
    "--junit-samples",
    is_flag=True,
    help="junit: also one test case per sample, failing when a score is below its gate.",
)
@click.option(
    "--worst",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="md: how many of the worst samples to list.",
)
@db_option
@translate_errors
def report(
    run: str,
    report_format: str,
    output: Path | None,
    baseline: str | None,
    junit_samples: bool,
    worst: int,
    db_path: Location | None,
) -> None:
    """Write a report of a run. RUN is `latest`, `latest~N` or a run id from the history,
    or a results file written by `localeval evaluate --output`.

    Reports are drawn from the stored results alone: no model is loaded and no file named in
    the data is opened. Exit status: 0 written, 2 bad usage or an unreadable results file.
    """
    from localeval.api import History

    with History(db_path) as history:
        text = history.report(
            run,
            report_format,
            baseline=baseline,
            worst=worst,
            junit_samples=junit_samples,
            output=output,
            on_output=warn_if_replaced,
        )
    if output is None:
        echo(text, nl=False)
        return
    echo(f"Report written to {output}", err=True)


COMMAND = report
