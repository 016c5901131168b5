"""`localeval calibrate`: how far the judge's scores agree with labelled rows."""

from __future__ import annotations

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
from localeval.errors import UsageError

if TYPE_CHECKING:
    from localeval.database import Location


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
    from localeval.calibration.agreement import format_table, thresholds_snippet
    from localeval.calibration.models_file import calibration_toml, save_calibration
    from localeval.calibration.run import CalibrationRequest, CalibrationRun
    from localeval.report import console
    from localeval.report.calibration_text import fits_text
    from localeval.results.contract import write_json

    if save and not fit:
        raise UsageError("--save writes the maps --fit fits; give --fit too")
    if from_runs:
        if judge_name or embedder_name or limit:
            raise UsageError(
                "--labels measures the runs' own judge on all their labels: --judge, "
                "--embedder and --limit do not apply"
            )
        calibrate_from_labels([str(r) for r in labelled], output, fit, save, models_path, db_path)
        return
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
        score_with=score_with,
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
            if save:  # the maps models.toml holds were measured on rows of their own
                echo(f"{calibration.models_file} is left as it was.")
        elif save:
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


def calibrate_from_labels(
    refs: list[str],
    output: Path | None,
    fit: bool,
    save: bool,
    models_path: str | None,
    db_path: Location | None,
) -> None:
    """`calibrate --labels RUN...`: the figures, the gates, and with --fit the maps."""
    from localeval.calibration.agreement import (
        format_table,
        suggested_thresholds,
        thresholds_snippet,
    )
    from localeval.calibration.labels import calibrate_labels
    from localeval.calibration.models_file import calibration_toml, save_calibration
    from localeval.config import find_models_file, load_models_config
    from localeval.database import database_files, default_db_path
    from localeval.report.calibration_text import fits_text
    from localeval.results.contract import check_output, write_json

    target = None
    if output is not None:
        # the models file --save writes into is an input here too, as in file mode
        models = [(find_models_file(models_path), "the models file")]
        target = check_output(output, models + database_files(db_path or default_db_path()))
        warn_if_replaced(target)
    found = calibrate_labels(refs, db_path)
    runs = ", ".join(f"{r.run.id} ({Path(r.run.info.dataset or '').name})" for r in found.runs)
    on = "run" if len(found.runs) == 1 else "runs"
    echo(f"Judge {found.judge} against {len(found.rows)} labels of your team on {on} {runs}:")
    if found.stale:
        echo(f"Left out {found.stale} labels whose verdict the run no longer has", err=True)
    echo(format_table(found.calibration))
    judge = found.judge or "?"
    suggested = suggested_thresholds(found.gate_rows())
    if suggested:
        echo("\n" + thresholds_snippet(judge, suggested))
    fits = found.fit() if fit else {}
    if fit:
        echo("\n" + fits_text(fits))
        maps = {kind: f.map for kind, f in fits.items() if f.kept}
        if not maps:
            echo("\nNo map is kept: none lowered the error on most folds and over them all.")
            if save:
                echo(f"{load_models_config(models_path).source} is left as it was.")
        elif save:
            models = load_models_config(models_path)
            saved = save_calibration(models.source, judge, maps)
            echo(f"\nCalibration of judge {judge} saved in {saved}")
        elif maps:
            echo("\nFor models.toml (or run again with --save):\n")
            echo(calibration_toml(judge, maps).rstrip())
    if output is not None:
        write_json(target or output, found.as_dict(fits))
        echo(f"Calibration written to {output}")


COMMAND = calibrate
