"""What `localeval evaluate --until-decided` says at the end (the command is cli/evaluate.py)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import click

from localeval.cli.options import command_to_continue, echo
from localeval.evaluation.requests import EvaluationOutcome
from localeval.evaluation.scoring import ScoringRun
from localeval.reports.console import WIDTH
from localeval.reports.decision_text import decision_text
from localeval.results.comparability import comparability_warnings
from localeval.results.decision import DEFAULT_MARGIN, WORSE
from localeval.text import printable


def decided(evaluation: ScoringRun, outcome: EvaluationOutcome) -> bool:
    """--until-decided: the verdicts, and where the run is; whether no metric got worse
    (and, for a run the data's end completed, every gate passed)."""
    report, run, baseline = outcome.until_decided or {}, outcome.run, evaluation.baseline
    label = baseline.label if baseline is not None else "the baseline"
    warnings = []
    if baseline is not None:
        metrics = list(report["verdicts"])
        warnings = comparability_warnings(baseline.run, outcome.view.run, metrics, True)
    echo("\n" + decision_text(report, label, warnings))
    if run.complete:
        echo(f"Run {run.id} saved in {evaluation.store.path}")
    else:
        rest = command_to_continue(run.id, ["--until-decided"], ["--margin"])
        kept = (
            f"Run {run.id} is kept, stopped by design, with {run.n_done} of {run.n_samples} "
            f"samples scored: `{printable(rest)}` scores the rest. Saved in "
            f"{evaluation.store.path}"
        )
        echo(textwrap.fill(kept, WIDTH, break_on_hyphens=False, break_long_words=False))
    worse = [m for m, v in report["verdicts"].items() if v == WORSE]
    return not worse and (outcome.passed or not run.complete)


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
