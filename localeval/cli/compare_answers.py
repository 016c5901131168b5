"""`localeval compare-answers`: which of two answers to each question is better."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from localeval.cli.exit_codes import EXIT_GATE_FAILED, EXIT_OK
from localeval.cli.options import (
    cache_option,
    db_option,
    echo,
    judge_option,
    models_option,
    output_option,
    progress_option,
    translate_errors,
    warn_if_replaced,
)
from localeval.cli.progress import Progress

if TYPE_CHECKING:
    from localeval.api import Location


@click.command("compare-answers")
@click.argument("data", type=click.Path(path_type=Path))
@output_option(
    "Write every row's verdict (winner, confidence, scores, reason, both orders' "
    "readings) and the summary as JSON here."
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
@click.option(
    "--estimate",
    "estimate_only",
    is_flag=True,
    help="Judge nothing: count what comparing will cost (judge calls, prompt tokens, what "
    "the cache answers) and the time on this machine. With --output, write it as JSON.",
)
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
    db_path: Location | None,
    estimate_only: bool,
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
    from localeval.api import AnswerComparison
    from localeval.reports import console
    from localeval.reports.estimate_text import estimate_text

    comparison = AnswerComparison(
        data, output=output, a_field=a_field, b_field=b_field, judge=judge_name,
        models=models_path, use_cache=use_cache, db=db_path,
    )  # fmt: skip
    warn_if_replaced(comparison.target)
    echo(f"Loaded {len(comparison.rows)} pairs from {data} ({a_field} vs {b_field})", err=True)
    if estimate_only:
        estimate = comparison.estimate()
        echo(estimate_text(estimate))
        if (written := comparison.write_estimate(estimate)) is not None:
            echo(f"Estimate written to {written}")
        sys.exit(EXIT_OK)
    bar = Progress(len(comparison.rows), "Comparing", enabled=progress)
    try:
        outcome = comparison.run(on_row=bar.advance)
    finally:
        bar.close()
    gate_failed = fail_if_b_worse and outcome.summary.b_worse()
    echo(console.pairwise_rows_table(outcome.rows, outcome.verdicts))
    echo("\n" + console.pairwise_summary_text(outcome.summary))
    if fail_if_b_worse:
        state = "FAIL" if gate_failed else "PASS"
        echo(f"\nGate --fail-if-b-worse: {state} (fails when the whole 95% CI is below 0.5)")
    echo("\n" + console.usage_text(outcome.usage))
    if output is not None:
        comparison.write(outcome)
        echo(f"Verdicts written to {output}")
    sys.exit(EXIT_OK if not gate_failed else EXIT_GATE_FAILED)


COMMAND = compare_answers
