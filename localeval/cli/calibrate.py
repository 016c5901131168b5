"""`localeval calibrate`: how far the judge's scores agree with labelled rows."""

from __future__ import annotations

from pathlib import Path

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
from localeval.errors import UsageError


@click.command()
@click.argument("labelled", nargs=-1, required=True, type=click.Path(path_type=Path))
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
@judge_option
@embedder_option
@models_option
@progress_option
@cache_option("Reuse judge calls made before.")
@db_option
@translate_errors
def calibrate(
    labelled: tuple[Path, ...],
    output: Path | None,
    limit: int | None,
    fit: bool,
    save: bool,
    judge_name: str | None,
    embedder_name: str | None,
    models_path: str | None,
    progress: bool,
    use_cache: bool,
    db_path: Path | None,
) -> None:
    """Measure how well the judge's scores agree with human labels in LABELLED files.

    Each row is a sample (see `evaluate`) plus `metric` (faithfulness, answer_relevancy,
    context_recall, context_precision, context_relevance, pairwise), `label` (1 good / 0
    bad, or a graded number; pairwise: +1 B better, -1 A better), optional `pair_id`
    (rows that differ only in the judged part) and `context_labels` (1/0 per chunk).
    Reports pair accuracy, ROC AUC, Spearman's rho and chunk AUC with 95% intervals;
    for 0/1 labels also the gate threshold that best separates them and the balanced
    accuracy of a gate there and at the metric's default threshold.

    With --fit, a calibration map per kind of verdict (statement supported, answer answers
    the question) is fitted from the rows' raw verdicts, measured by leaving one labelled
    dataset out at a time (expected calibration error and a reliability diagram), and
    printed as models.toml text; --save writes it into the judge's entry. A row that
    cannot be read is left out with a warning.
    """
    from localeval.calibration.agreement import format_table, thresholds_snippet
    from localeval.calibration.models_file import calibration_toml, save_calibration
    from localeval.calibration.run import CalibrationRequest, CalibrationRun
    from localeval.report import console
    from localeval.report.calibration_text import fits_text
    from localeval.results.contract import write_json

    if save and not fit:
        raise UsageError("--save writes the maps --fit fits; give --fit too")
    request = CalibrationRequest(
        list(labelled),
        output,
        limit,
        judge_name,
        embedder_name,
        models_path,
        use_cache,
        db_path,
        on_invalid=lambda error: echo(f"Skipped: {error}", err=True),
    )
    with CalibrationRun(request) as calibration:
        warn_if_replaced(calibration.output)
        names = ", ".join(sorted(calibration.names))
        echo(f"Calibrating on {len(calibration.rows)} labelled rows: {names}", err=True)
        bar = Progress(len(calibration.rows), "Calibrating", enabled=progress)
        try:
            result = calibration.run(on_row=lambda _: bar.advance())
        finally:
            bar.close()
    echo(format_table(result))
    judge = calibration.tools.judge
    suggested = calibration.suggested(result)
    fits = calibration.fit(result) if fit else {}
    if fit:
        echo("\n" + fits_text(fits))
    entry = calibration.judge_entry
    if judge is not None and fits and entry is not None:
        maps = {kind: f.map for kind, f in fits.items() if f.kept}
        if not maps:
            echo(
                "\nNo map is kept: none lowered the error on most of the datasets left out "
                "of its fit and over them all."
            )
        if save:
            saved = save_calibration(calibration.models_file, entry, maps)
            echo(f"\nCalibration of judge {entry} saved in {saved}")
        elif maps:
            echo("\nFor models.toml (or run again with --save):\n")
            echo(calibration_toml(entry, maps).rstrip())
    elif judge is not None and suggested:
        echo("\n" + thresholds_snippet(judge.name, suggested))
    if judge is not None:
        echo("\n" + console.usage_text(judge.usage))
    if output is not None:
        write_json(calibration.output or output, calibration.as_dict(result, fits))
        echo(f"Calibration written to {output}")


COMMAND = calibrate
