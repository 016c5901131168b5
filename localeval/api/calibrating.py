"""How far the judge agrees with people: `localeval.calibrate` (labelled files) and
`localeval.calibrate_labels` (the team's labels of runs), what `localeval calibrate` does.

    found = localeval.calibrate(["labelled.jsonl"], fit=True)
    found.table.agreements      # pair accuracy, ROC AUC, Spearman's rho ... with 95% intervals
    found.thresholds            # gates on this judge's scale
    found.kept.toml()           # the calibration maps worth applying, as models.toml text

Nothing here prints: what happens while the rows are scored is told to `events` (a
CalibrationEvents: the output file it replaces, the scoring's start, each row, its end).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from localeval.api.events import LocalevalWarning
from localeval.api.history import DEFAULT_DB, history_location
from localeval.api.labelling import Db
from localeval.calibration.calibrating import CalibrationRequest
from localeval.calibration.outcome import (
    CalibrationEvents,
    CalibrationOutcome,
    LabelsOutcome,
    MapsKept,
    calibrate_files,
    calibrate_runs,
)
from localeval.calibration.rows import RowScore
from localeval.errors import DatasetError
from localeval.results.output_files import OutputTarget

Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


class Unheard(CalibrationEvents):
    """Events no one listens to (the default)."""


def _skipped(error: DatasetError) -> None:
    warnings.warn(f"Skipped: {error}", LocalevalWarning, stacklevel=2)


def _paths(given: Paths) -> list[Path]:
    if isinstance(given, str | os.PathLike):
        return [Path(given)]
    return [Path(p) for p in given]


def calibrate(
    files: Paths,
    *,
    output: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    fit: bool = False,
    save: bool = False,
    score_with: str | None = None,
    judge: str | None = None,
    embedder: str | None = None,
    models: str | None = None,
    use_cache: bool = True,
    db: Db = DEFAULT_DB,
    events: CalibrationEvents | None = None,
    on_invalid: Callable[[DatasetError], None] | None = _skipped,
) -> CalibrationOutcome:
    """Score labelled files' rows (a sample plus `metric` and `label`, docs/usage.md) with
    the judge and measure how far its scores agree with the labels, as `localeval
    calibrate FILE...` does. `limit`: the first rows of each file; `fit`: also fit the
    judge's calibration maps and keep those worth applying (`save`: write them into the
    judge's models.toml entry); `score_with`: score every row with this metric instead;
    `output`: write every figure and row as JSON there; `judge`, `embedder`, `models`,
    `use_cache`, `db` as for localeval.evaluate. A row that cannot be read is left out
    with a LocalevalWarning (`on_invalid`: hears it instead; None: it stops the call).
    Returns the figures (`table`), the gates suggested (`thresholds`), the maps (`fits`,
    `kept`), the judge's `usage` and where the output was `written`."""
    request = CalibrationRequest(
        _paths(files),
        output=None if output is None else Path(output),
        limit=limit,
        judge=judge,
        embedder=embedder,
        models=models,
        use_cache=use_cache,
        db=history_location(db),
        score_with=score_with,
        on_invalid=on_invalid,
    )
    return calibrate_files(request, fit, save, events or Unheard())


def calibrate_labels(
    runs: str | Sequence[str],
    *,
    output: str | os.PathLike[str] | None = None,
    fit: bool = False,
    save: bool = False,
    models: str | None = None,
    db: Db = DEFAULT_DB,
    events: CalibrationEvents | None = None,
) -> LabelsOutcome:
    """The runs' own judge against the team's labels of their verdicts and scores (`runs`:
    latest, latest~N, run ids), as `localeval calibrate --labels RUN...` does: no model is
    loaded. Returns what `calibrate` does, and `found`: the runs and their labels."""
    refs = [runs] if isinstance(runs, str) else list(runs)
    target = None if output is None else Path(output)
    return calibrate_runs(
        refs, target, fit, save, models, history_location(db), events or Unheard()
    )


__all__ = [
    "CalibrationEvents",
    "CalibrationOutcome",
    "LabelsOutcome",
    "MapsKept",
    "OutputTarget",
    "RowScore",
    "calibrate",
    "calibrate_labels",
]
