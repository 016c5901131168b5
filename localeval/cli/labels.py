"""`localeval labels export|import`: a run's labels as a file, and a file's labels into a
run, so a team keeps them in git and reuses them on the next run of the same samples."""

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


@click.group("labels")
def labels_group() -> None:
    """Labels of a run's judge verdicts and scores (made with `localeval review`), as
    files: one JSON object per line (or CSV), `sample_id`, `metric`, `label` in [0, 1] and,
    for a verdict, its number (`verdict`) and `text`."""


@labels_group.command("export")
@click.argument("run", metavar="RUN")
@output_option("Write the labels here (default: standard output).")
@db_option
@translate_errors
def labels_export(run: str, output: Path | None, db_path: Location | None) -> None:
    """Write every reviewer's current labels of RUN (latest, latest~N or a run id), in the
    order they were made: JSON lines, or CSV when the output's name ends in .csv;
    gzip-compressed when it ends in .gz."""
    from localeval.api import DEFAULT_DB, RunLabels

    labels = RunLabels(run, db=db_path or DEFAULT_DB)
    if output is None:
        echo(labels.text(), nl=False)
        return
    written = labels.export(output, on_replace=warn_if_replaced)
    echo(f"{written.n_labels} labels of run {written.run_id} written to {output}", err=True)


@labels_group.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--run", "run", required=True, metavar="RUN", help="The run to label.")
@click.option(
    "--reviewer",
    default=None,
    metavar="NAME",
    help="Whose labels the rows without a `reviewer` are (default: the OS user).",
)
@click.option(
    "--random-sample",
    is_flag=True,
    help="The file's samples were drawn at random from the run's (or labelled in the review "
    'page\'s "label for the estimate" order): their labels then count for the mean '
    "corrected by labels. Without it, a row counts only where its `selection` says random.",
)
@db_option
@translate_errors
def labels_import(
    file: Path, run: str, reviewer: str | None, random_sample: bool, db_path: Location | None
) -> None:
    """Label RUN from FILE's rows (JSONL, JSON or CSV): a verdict by its `verdict` number
    where the run's verdict of that number says the row's `text`, else by its text; a row
    with neither labels the sample's score. A row of a sample the run does not have stops
    the import (exit 2, nothing stored); a row whose verdict or score the run no longer has
    (its statement changed) is counted and left out; of two rows for the same item and
    reviewer the later counts. A row that is already its reviewer's label is not stored
    again, so importing a file twice stores it once. Afterwards it says which samples have
    verdicts still unlabelled (not counted for the mean corrected by labels) and on how many
    verdicts reviewers disagree (every label kept; their mean counts)."""
    from localeval.api import DEFAULT_DB, RunLabels
    from localeval.reports import history_text
    from localeval.text import counted

    done = RunLabels(run, db=db_path or DEFAULT_DB).import_file(
        file, reviewer=reviewer, random_sample=random_sample
    )
    already = done.already
    echo(
        f"Imported {counted(len(done.stored), 'label')} into run {done.run_id}; "
        f"{already} {'was' if already == 1 else 'were'} there already, "
        f"{len(done.unmatched)} matched no verdict or score of the run"
    )
    if done.not_random:
        echo(
            f"{done.not_random} of the labels imported are of samples not said to be drawn "
            "at random: kept for calibrate, not counted for the mean corrected by labels "
            "(--random-sample says the file's samples were)",
            err=True,
        )
    if done.superseded:
        echo(
            f"Left out {counted(done.superseded, 'row')} of {file} for a later row of the same "
            "item and reviewer",
            err=True,
        )
    if done.unmatched:
        shown = ", ".join(str(n) for n in done.unmatched[:10])
        more = ", ..." if len(done.unmatched) > 10 else ""
        echo(f"Unmatched rows of {file} (lines): {shown}{more}", err=True)
    for note in history_text.label_notes(done.people, done.run_id, db=done.db):
        echo(note, err=True)


COMMAND = labels_group
