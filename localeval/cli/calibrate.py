"""`localeval calibrate`: how far the judge's scores agree with labelled rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from localeval.cli.options import (
    cache_option,
    db_option,
    echo,
    embedder_option,
    judge_option,
    models_option,
    output_option,
    progress_option,
    translate_errors,
    warn_if_replaced,
)
from localeval.cli.progress import Progress
from localeval.errors import DatasetError, UsageError

if TYPE_CHECKING:
    from localeval.api import CalibrationOutcome, LabelsOutcome, Location, OutputTarget, RowScore


@click.command()
@click.argument("labelled", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--labels",
    "from_runs",
    is_flag=True,
    help="LABELLED are runs of the history (latest, latest~N, an id) whose verdicts and "
    "scores your team labelled (`localeval review`, `labels import`): measure the judge "
    "against those labels; no model is loaded.",
)
@output_option("Write every figure and every row's score as JSON here.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Use only the first N rows of each file (a quick look).",
)
@click.option(
    "--fit",
    is_flag=True,
    help="Also fit the judge's calibration maps (raw P(Yes) -> probability a person agrees), "
    "one per kind of verdict, and measure each on rows it was not fitted on.",
)
@click.option(
    "--save",
    is_flag=True,
    help="With --fit: write the maps into the judge's entry in models.toml.",
)
@click.option(
    "--score-with",
    metavar="METRIC",
    default=None,
    help="Score every row with this metric instead of the one it names, to compare a "
    "baseline (rouge_l, answer_similarity, ...) on the same labels.",
)
@judge_option
@embedder_option
@models_option
@progress_option
@cache_option("Reuse judge calls made before.")
@db_option
@translate_errors
def calibrate(
    labelled: tuple[Path, ...],
    from_runs: bool,
    output: Path | None,
    limit: int | None,
    fit: bool,
    save: bool,
    score_with: str | None,
    judge_name: str | None,
    embedder_name: str | None,
    models_path: str | None,
    progress: bool,
    use_cache: bool,
    db_path: Location | None,
) -> None:
    """Measure how well the judge's scores agree with human labels in LABELLED files.

    Each row is a sample (see `evaluate`) plus `metric` (faithfulness, answer_relevancy,
    context_recall, context_precision, context_relevance, answer_correctness, pairwise),
    `label` (1 good / 0 bad, or a graded number; pairwise: +1 B better, -1 A better),
    optional `pair_id` (rows that differ only in the judged part) and `context_labels`
    (1/0 per chunk). A row of another metric with two answers (`answer_a`, `answer_b`)
    and a preference `label` (> 0: B better) has each answer scored alone.
    Reports pair accuracy, ROC AUC, Spearman's rho, chunk AUC and sign agreement with 95%
    intervals; for 0/1 labels also the gate threshold that best separates them and the
    balanced accuracy of a gate there and at the metric's default threshold.

    With --fit, a calibration map per kind of verdict (statement supported, answer answers
    the question) is fitted from the rows' raw verdicts, measured by leaving one labelled
    dataset out at a time (expected calibration error and a reliability diagram), and
    printed as models.toml text; --save writes it into the judge's entry. A row that
    cannot be read is left out with a warning.

    With --labels, LABELLED are runs: the judge's agreement with your team's labels of
    its verdicts there, per kind of verdict and per metric's score (AUC, balanced accuracy
    at the judge's verdict or the run's gate, expected calibration error, with 95%
    intervals; reviewers' agreement where two labelled the same item), the gates that fit
    this judge on this data, and with --fit maps held out by folds of samples.
    """
    from localeval.api import DEFAULT_DB, calibrate_labels
    from localeval.api import calibrate as calibrate_files

    events = Printed(progress)
    db = db_path or DEFAULT_DB
    if from_runs:
        if judge_name or embedder_name or limit:
            raise UsageError(
                "--labels measures the runs' own judge on all their labels: --judge, "
                "--embedder and --limit do not apply"
            )
        refs = [str(r) for r in labelled]
        show_labels(
            calibrate_labels(
                refs, output=output, fit=fit, save=save, models=models_path, db=db, events=events
            )
        )
        return
    found = calibrate_files(
        list(labelled),
        output=output,
        limit=limit,
        fit=fit,
        save=save,
        score_with=score_with,
        judge=judge_name,
        embedder=embedder_name,
        models=models_path,
        use_cache=use_cache,
        db=db,
        events=events,
        on_invalid=_skipped,
    )
    show_files(found)


def _skipped(error: DatasetError) -> None:
    echo(f"Skipped: {error}", err=True)


class Printed:
    """What `localeval calibrate` says on stderr while it works (its CalibrationEvents)."""

    def __init__(self, progress: bool):
        self.progress = progress
        self.bar: Progress | None = None

    def replacing(self, target: OutputTarget | None) -> None:
        warn_if_replaced(target)

    def scoring(self, n_rows: int, metrics: Sequence[str]) -> None:
        echo(f"Calibrating on {n_rows} labelled rows: {', '.join(metrics)}", err=True)
        self.bar = Progress(n_rows, "Calibrating", enabled=self.progress)

    def scored(self, row: RowScore) -> None:
        if self.bar is not None:
            self.bar.advance()

    def scoring_ended(self) -> None:
        if self.bar is not None:
            self.bar.close()


def show_files(outcome: CalibrationOutcome) -> None:
    """The figures of labelled files, then the maps or the gates, and what the judge did."""
    from localeval.reports import console
    from localeval.reports.calibration_text import format_table

    echo(format_table(outcome.table))
    show_fits(outcome)
    show_thresholds(outcome)
    if outcome.usage is not None:
        echo("\n" + console.usage_text(outcome.usage))
    show_written(outcome)


def show_labels(outcome: LabelsOutcome) -> None:
    """`calibrate --labels`: the runs, the figures, the gates, then the maps."""
    from localeval.reports.calibration_text import format_table

    found = outcome.found
    assert found is not None
    runs = ", ".join(f"{r.run.id} ({Path(r.run.info.dataset or '').name})" for r in found.runs)
    on = "run" if len(found.runs) == 1 else "runs"
    echo(f"Judge {found.judge} against {len(found.rows)} labels of your team on {on} {runs}:")
    if found.stale:
        echo(f"Left out {found.stale} labels whose verdict the run no longer has", err=True)
    echo(format_table(outcome.table))
    show_thresholds(outcome)
    show_fits(outcome)
    show_written(outcome)


def show_thresholds(outcome: CalibrationOutcome) -> None:
    from localeval.reports.calibration_text import thresholds_snippet

    if outcome.judge is not None and outcome.thresholds:
        echo("\n" + thresholds_snippet(outcome.judge, outcome.thresholds))


def show_fits(outcome: CalibrationOutcome) -> None:
    """The maps fitted, and which are kept: saved, or as models.toml text."""
    from localeval.reports.calibration_text import fits_text

    if outcome.fits is not None:
        echo("\n" + fits_text(outcome.fits))
    kept = outcome.kept
    if kept is None:
        return
    if not kept.maps:
        echo(f"\nNo map is kept: none lowered the error on most {kept.held_out} and over them all.")
        if kept.models_file is not None:  # the maps models.toml holds stay as they were
            echo(f"{kept.models_file} is left as it was.")
    elif kept.saved is not None:
        echo(f"\nCalibration of judge {kept.judge} saved in {kept.saved}")
    else:
        echo("\nFor models.toml (or run again with --save):\n")
        echo(kept.toml().rstrip())


def show_written(outcome: CalibrationOutcome) -> None:
    if outcome.written is not None:
        echo(f"Calibration written to {outcome.written}")


COMMAND = calibrate
