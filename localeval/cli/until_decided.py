"""What `localeval evaluate --until-decided` says at the end (the command is cli/evaluate.py)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from localeval.api.defaults import DEFAULT_MARGIN
from localeval.cli.options import command_to_continue, echo
from localeval.reports.console import WIDTH
from localeval.reports.decision_text import decision_text
from localeval.text import printable

if TYPE_CHECKING:
    from localeval.api import Evaluation


def decided(evaluation: Evaluation) -> None:
    """--until-decided: the verdicts, and where the run is (whether it passed is the
    evaluation's `passed`)."""
    decision = evaluation.decision
    if decision is None:
        return
    echo("\n" + decision_text(decision.report, decision.baseline, decision.warnings))
    run_id = evaluation.run_id
    if evaluation.complete:
        echo(f"Run {run_id} saved in {evaluation.db}")
        return
    rest = command_to_continue(run_id, ["--until-decided"], ["--margin"])
    kept = (
        f"Run {run_id} is kept, stopped by design, with {evaluation.n_scored} of "
        f"{evaluation.n_samples} samples scored: `{printable(rest)}` scores the rest. Saved in "
        f"{evaluation.db}"
    )
    echo(textwrap.fill(kept, WIDTH, break_on_hyphens=False, break_long_words=False))


def until_decided_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """evaluate's --until-decided and --margin."""
    until = click.option(
        "--until-decided",
        is_flag=True,
        help="With --baseline: score the samples in a seeded random order and stop as soon as "
        "every gated metric is decided: better or worse (its 95% anytime-valid confidence "
        "sequence of NEW - BASE excludes 0) or no change (it lies within +-margin). The run is "
        "kept, stopped: the same command without this option scores the rest. Exit 1 if a "
        "metric is worse.",
    )
    margin = click.option(
        "--margin",
        type=float,
        default=None,
        metavar="M",
        help=f"With --until-decided: a mean change within +-M is no change [default: "
        f"{DEFAULT_MARGIN:g}].",
    )
    return until(margin(command))
