"""What `localeval evaluate` says on stderr while it works: the evaluation's events
(localeval.api.EvaluationEvents) printed. A module of its own, imported when the command
runs, so that `localeval --help` does not import the API (the leading underscore keeps it
out of the commands)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from localeval.api import (
    ClusterPlan,
    DatasetWarning,
    Evaluation,
    EvaluationEvents,
    SampleResult,
    StoredRun,
)
from localeval.cli.options import echo
from localeval.cli.progress import Progress
from localeval.errors import DatasetError, RunInUseError


class Printed(EvaluationEvents):
    """What `localeval evaluate` says on stderr while it works."""

    def __init__(self, data: str, show_progress: bool, new_run: bool = False):
        #: how messages name the data (as the library names it, once it is read)
        self.data = data
        self.show_progress = show_progress
        #: --no-resume was given: the same command would start yet another run
        self.new_run = new_run
        #: the run kept part-way when scoring stopped (the command that goes on names it)
        self.stopped_run: str | None = None
        self.progress: Progress | None = None
        #: each sample's estimated seconds, when an estimate was made for the time left
        self.expected: dict[str, float] | None = None
        #: samples scored at once (a Ray cluster's actors), which divide the time left
        self.parallel = 1

    def skipped(self, error: DatasetError) -> None:
        echo(f"Skipped: {error}", err=True)

    def warned(self, warning: DatasetWarning) -> None:
        echo(f"Warning: {warning}", err=True)

    def loaded(self, n_samples: int, n_skipped: int, metrics: Sequence[str], data: str) -> None:
        self.data = data
        loaded = f"Loaded {n_samples} samples from {data}"
        if n_skipped:
            loaded += f" ({n_skipped} invalid rows skipped)"
        echo(f"{loaded}; metrics: {', '.join(metrics)}", err=True)

    def noted(self, message: str) -> None:
        echo(f"Warning: {message}", err=True)

    def in_use(self, busy: RunInUseError) -> None:
        echo(
            f"Note: {busy}, so this process does not join it: it starts a run of its own.",
            err=True,
        )

    def resuming(self, run: StoredRun) -> None:
        echo(
            f"Resuming run {run.id}: {run.n_done} of {run.n_samples} samples were scored "
            f"before it stopped. (--no-resume starts a new run.)",
            err=True,
        )

    def estimated(self, seconds: Mapping[str, float]) -> None:
        self.expected = dict(seconds)

    def scoring(self, run: StoredRun) -> None:
        expected = None if self.expected is None else sum(self.expected.values()) / self.parallel
        self.progress = Progress(
            run.n_samples,
            "Evaluating",
            enabled=self.show_progress,
            resumed=run.n_done,
            expected=expected,
        )

    def scored(self, result: SampleResult) -> None:
        if self.progress is not None:
            expected = (self.expected or {}).get(result.sample.sample_id, 0.0)
            self.progress.advance(expected=expected / self.parallel)

    def scoring_ended(self) -> None:
        if self.progress is not None:
            self.progress.close()

    def stopped(self, run: StoredRun, n_done: int) -> None:
        self.stopped_run = run.id
        again = "re-run the same command"
        if self.new_run:
            again = f"re-run the command with --resume {run.id} in place of --no-resume"
        echo(
            f"Run {run.id} is saved with {n_done} of {run.n_samples} samples scored; {again} "
            "to continue it.",
            err=True,
        )

    def evaluated(self, evaluation: Evaluation) -> None:
        """The summary, per category, the gates and what the judge did (before the results
        are written: an --output that is standard output gets them after it)."""
        from localeval.reports import console

        summary = evaluation.summary_view()
        echo(console.run_summary(summary, evaluation.gates_from_judge, evaluation.judge))
        states = evaluation.from_states
        if line := console.states_line(states.samples_from_states, states.restored_prompt_tokens):
            echo(line, err=True)

    def cluster_ready(self, plan: ClusterPlan) -> None:
        self.parallel = plan.actors
        echo(f"Ray: {plan}", err=True)

    def cluster_done(self, sent: int, answered: int, plan: ClusterPlan) -> None:
        echo(
            f"Ray: {sent} samples scored by the actors, {answered} answered here from the cache",
            err=True,
        )

    def invalidated(self, run: StoredRun, reason: str) -> None:
        echo(
            f"{reason}: run {run.id} is never continued; re-run the same command to start a "
            "new run.",
            err=True,
        )
