"""What an evaluation tells its caller along the way: the protocol, `EvaluationEvents` (a
base class whose every method does nothing; give `evaluate(events=...)` a subclass), the
types its methods receive, and the events a Python caller gets by default, `Warned`:
warnings and a tqdm progress bar. The command line's events (cli/evaluate.py) print the
same events on stderr."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Any

from localeval.data.samples import DatasetWarning
from localeval.errors import DatasetError, RunInUseError
from localeval.evaluation.requests import ClusterPlan, EvaluationEvents
from localeval.history.records import StoredRun
from localeval.results.model import SampleResult

__all__ = [
    "ClusterPlan",
    "DatasetWarning",
    "EvaluationEvents",
    "LocalevalWarning",
    "SampleResult",
    "StoredRun",
    "Warned",
]


class LocalevalWarning(UserWarning):
    """Something in the data or the options the user may not have meant (an unknown
    field, a row skipped), or a run continued or left part-way."""


class Warned(EvaluationEvents):
    """What an evaluation in Python tells its caller by default: warnings, a progress bar
    (`progress`), and each scored sample kept in `results` (Evaluation.scored)."""

    def __init__(self, progress: bool, kept: bool):
        self.progress = progress
        #: the run is kept in a history, which the same call continues
        self.kept = kept
        self.bar: Any = None
        self.results: list[SampleResult] = []

    def skipped(self, error: DatasetError) -> None:
        warn(f"Skipped: {error}")

    def warned(self, warning: DatasetWarning) -> None:
        warn(str(warning))

    def noted(self, message: str) -> None:
        warn(message)

    def in_use(self, busy: RunInUseError) -> None:
        warn(f"{busy}, so this evaluation starts a run of its own")

    def resuming(self, run: StoredRun) -> None:
        warn(
            f"continuing run {run.id}: {run.n_done} of {run.n_samples} samples were scored "
            "before it stopped (resume=False starts a new run)"
        )

    def scoring(self, run: StoredRun) -> None:
        if self.progress:
            from tqdm.auto import tqdm  # a widget in a notebook, text elsewhere

            self.bar = tqdm(
                total=run.n_samples, initial=run.n_done, desc="Evaluating", unit="sample"
            )

    def scored(self, result: SampleResult) -> None:
        self.results.append(result)
        if self.bar is not None:
            self.bar.update(1)

    def scoring_ended(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def stopped(self, run: StoredRun, n_done: int) -> None:
        if self.kept:
            warn(
                f"run {run.id} is saved with {n_done} of {run.n_samples} samples scored; "
                "the same call continues it"
            )

    def invalidated(self, run: StoredRun, reason: str) -> None:
        warn(f"{reason}: run {run.id} is never continued; the same call starts a new run")

    def cluster_ready(self, plan: ClusterPlan) -> None:
        warn(f"Ray: {plan}")


def warn(message: str, category: type[Warning] | None = None) -> None:
    """A warning (default a LocalevalWarning) pointing at the caller's own line."""
    warnings.warn(message, category or LocalevalWarning, stacklevel=_callers_level())


_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: frames passed over besides localeval's own: the `with` blocks the API opens
_PASSED_OVER = (_PACKAGE_FOLDER, os.path.abspath(contextlib.__file__))


def _callers_level() -> int:
    """The stacklevel of the first frame outside localeval: a warning points at the
    caller's own line, however deep in the engine it was raised."""
    frame, level = sys._getframe(1), 1  # warn's frame is level 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PASSED_OVER):
        frame, level = frame.f_back, level + 1
    return level
