"""The localeval command line: each command is one library call plus error translation."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from localeval import __version__
from localeval.cli import history as cli_history
from localeval.cli.options import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    cache_option,
    db_option,
    embedder_option,
    judge_option,
    max_drop_option,
    models_option,
    progress_option,
    translate_errors,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="localeval")
def main() -> None:
    """Evaluate retrieval-augmented generation offline, with local judge and embedding models.

    Start with `localeval evaluate DATA`; `localeval models` shows which models are set up.
    """


@main.command()
@click.argument("data", type=click.Path(path_type=Path))
@click.option(
    "-m",
    "--metric",
    "metrics",
    multiple=True,
    metavar="METRIC",
    help="Metric to compute; repeat for several. Default: faithfulness, "
    "answer_relevancy, context_recall, context_precision. Also: bleu, rouge_l (against "
    "reference_answer, no model), rubric (judge scores 0-10 per criterion).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the full results (scores, evidence, summary, gates) as JSON here.",
)
@click.option(
    "--threshold",
    "thresholds",
    multiple=True,
    metavar="METRIC=VALUE",
    help="Override a quality gate, e.g. --threshold faithfulness=0.9.",
)
@click.option(
    "--criteria",
    "criteria_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML or YAML file of rubric criteria: a table 'criteria' of name = one-line "
    "description. Default criteria: accuracy, completeness, clarity.",
)
@click.option(
    "--criterion",
    "criterion_options",
    multiple=True,
    metavar="'NAME: DESCRIPTION'",
    help="A rubric criterion given inline; repeat for several (instead of --criteria).",
)
@judge_option
@embedder_option
@models_option
@progress_option
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="Evaluate the valid rows and skip invalid ones, listing each (file, line, reason) "
    "on stderr and in results.json. Default: the first invalid row stops the run.",
)
@db_option
@click.option(
    "--resume",
    "resume",
    is_flag=False,
    flag_value="matching",
    default=None,
    metavar="[RUN]",
    help="Continue an interrupted run: RUN by id, or without a value the interrupted run of "
    "this same evaluation (which must exist). Re-running the same command does this anyway.",
)
@click.option(
    "--no-resume", "new_run", is_flag=True, help="Start a new run even if one was interrupted."
)
@click.option(
    "--baseline",
    metavar="RUN",
    default=None,
    help="Compare with this run (an id, latest, latest~N, or a results.json file) and exit 1 "
    "if a metric regressed (see --max-drop).",
)
@max_drop_option
@cache_option(
    "Answer judge calls and embeddings made before from the local cache (re-runs of "
    "unchanged data cost nothing); --no-cache asks the models again."
)
@translate_errors
def evaluate(
    data: Path,
    metrics: tuple[str, ...],
    output: Path | None,
    thresholds: tuple[str, ...],
    criteria_file: Path | None,
    criterion_options: tuple[str, ...],
    judge_name: str | None,
    embedder_name: str | None,
    models_path: str | None,
    progress: bool,
    db_path: Path | None,
    resume: str | None,
    new_run: bool,
    baseline: str | None,
    max_drop: float,
    use_cache: bool,
    skip_invalid: bool,
) -> None:
    """Score the samples in DATA (JSONL, JSON array or CSV) and check the quality gates.

    Every run is kept in the run history (see `localeval runs`), sample by sample as it is
    scored: after Ctrl-C or a crash, running the same command again continues the run.

    Exit status: 0 all gates pass, 1 a gate (or the --baseline regression gate) failed,
    2 bad usage or input, 3 internal error.
    """
    from localeval.cli.app import evaluate_file

    passed = evaluate_file(
        data,
        metrics,
        output=output,
        threshold_overrides=thresholds,
        judge_name=judge_name,
        embedder_name=embedder_name,
        models_path=models_path,
        show_progress=progress,
        skip_invalid=skip_invalid,
        db_path=db_path,
        resume=resume,
        new_run=new_run,
        baseline=baseline,
        max_drop=max_drop,
        use_cache=use_cache,
        criteria_file=criteria_file,
        criterion_options=criterion_options,
    )
    sys.exit(EXIT_OK if passed else EXIT_GATE_FAILED)


@main.command("compare-answers")
@click.argument("data", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write every row's verdict (winner, confidence, scores, reason, both orders' "
    "readings) and the summary as JSON here.",
)
@click.option(
    "--fail-if-b-worse",
    is_flag=True,
    help="Exit 1 when B is worse than A beyond noise: the whole 95% interval of B's win "
    "rate lies below 0.5.",
)
@click.option(
    "--a-field",
    default="answer_a",
    show_default=True,
    help="The field holding answer A (e.g. the old system's answers).",
)
@click.option(
    "--b-field",
    default="answer_b",
    show_default=True,
    help="The field holding answer B (e.g. the new system's answers).",
)
@judge_option
@models_option
@progress_option
@cache_option(
    "Answer judge calls made before from the local cache; --no-cache asks the judge again."
)
@db_option
@translate_errors
def compare_answers(
    data: Path,
    output: Path | None,
    fail_if_b_worse: bool,
    a_field: str,
    b_field: str,
    judge_name: str | None,
    models_path: str | None,
    progress: bool,
    use_cache: bool,
    db_path: Path | None,
) -> None:
    """Judge which of two answers to each question is better, A or B.

    DATA (JSONL, JSON array or CSV) has per row a question, optional contexts and
    reference_answer, and two answers in answer_a and answer_b (other fields with
    --a-field/--b-field, e.g. two answer columns of one file). An optional label (+1 B
    better, -1 A better, 0 equal) is compared with the verdicts.

    Each pair is judged in both orders, A first and B first; a row whose winner changes
    with the order is a tie, so swapping A and B never changes the verdict. Prints each
    row's verdict, B's win rate over A ((wins + ties/2) / rows) with its 95% bootstrap
    interval, and how many rows flipped with the order.

    Exit status: 0 done (and, with --fail-if-b-worse, B not worse), 1 --fail-if-b-worse
    and the 95% interval of B's win rate lies wholly below 0.5, 2 bad usage or input,
    3 internal error.
    """
    from localeval.cli.app import compare_answers_file

    passed = compare_answers_file(
        data,
        output=output,
        fail_if_b_worse=fail_if_b_worse,
        a_field=a_field,
        b_field=b_field,
        judge_name=judge_name,
        models_path=models_path,
        show_progress=progress,
        use_cache=use_cache,
        db_path=db_path,
    )
    sys.exit(EXIT_OK if passed else EXIT_GATE_FAILED)


@main.command("models")
@models_option
@translate_errors
def models_command(models_path: str | None) -> None:
    """List the judge and embedding models of models.toml and check their files."""
    from localeval.cli.app import describe_models

    click.echo(describe_models(models_path))


@main.command()
@click.argument("labelled", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write every figure and every row's score as JSON here.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Use only the first N rows of each file (a quick look).",
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
    """
    from localeval.cli.app import calibrate_files

    calibrate_files(
        list(labelled),
        output=output,
        limit=limit,
        judge_name=judge_name,
        embedder_name=embedder_name,
        models_path=models_path,
        show_progress=progress,
        use_cache=use_cache,
        db_path=db_path,
    )


# the commands over stored runs live in localeval.cli.history
for command in (
    cli_history.runs_group,
    cli_history.diff,
    cli_history.report,
    cli_history.cache_group,
):
    main.add_command(command)
