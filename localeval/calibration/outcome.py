"""`localeval calibrate` whole, as library calls: the labelled files scored (or the runs'
labels read), the figures, the gates suggested, the maps fitted, which are kept and
whether they are saved, and the --output file written; the command line prints the
outcome. Nothing here prints: what happens on the way is told to `CalibrationEvents`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from localeval.calibration.agreement import Calibration, suggested_thresholds
from localeval.calibration.calibrating import CalibrationRequest, CalibrationRun
from localeval.calibration.fit import KindFit
from localeval.calibration.models_file import calibration_toml, save_calibration
from localeval.calibration.rows import RowScore
from localeval.database import Location
from localeval.errors import UsageError, param
from localeval.results.output_files import OutputTarget
from localeval.verdict_maps import VerdictMap

if TYPE_CHECKING:  # read from the database, for --labels only
    from localeval.calibration.labels import LabelCalibration


#: what a map had to lower the error on, in file mode and with --labels
BY_DATASET, BY_FOLD = "of the datasets left out of its fit", "folds"


class CalibrationEvents(Protocol):
    """What the caller hears while a calibration works."""

    def replacing(self, target: OutputTarget | None) -> None:
        """The --output target, checked before any work (it may replace a file)."""

    def scoring(self, n_rows: int, metrics: Sequence[str]) -> None:
        """The labelled rows are read and the models set up; scoring starts."""

    def scored(self, row: RowScore) -> None:
        """One row was scored."""

    def scoring_ended(self) -> None:
        """Scoring is over, done or not."""


@dataclass(frozen=True)
class MapsKept:
    """What became of the fitted maps: those worth applying, and where they were saved."""

    #: the judge's models.toml entry they are for
    judge: str
    maps: dict[str, VerdictMap]
    #: the models file --save writes into (None: not asked to save)
    models_file: Path | None = None
    #: where they were saved (None: not saved)
    saved: Path | None = None
    #: what a map had to lower the error on to be kept, as the note on none kept says
    held_out: str = ""

    def toml(self) -> str:
        """The maps as the judge's models.toml tables (what `save` writes)."""
        return calibration_toml(self.judge, self.maps)


def keep_maps(
    fits: dict[str, KindFit], judge: str, models_file: Path | None, held_out: str
) -> MapsKept:
    """The maps worth applying, saved into `models_file` when it is given and any is kept."""
    maps = {kind: found.map for kind, found in fits.items() if found.kept}
    saved = save_calibration(models_file, judge, maps) if maps and models_file else None
    return MapsKept(judge, maps, models_file, saved, held_out)


@dataclass
class CalibrationOutcome:
    """What `localeval calibrate` found and did, for the command line to show."""

    table: Calibration
    #: the judge's name (None: the rows used no judge)
    judge: str | None
    #: gate thresholds on this judge's scale, to be shown (empty: none to show)
    thresholds: dict[str, float] = field(default_factory=dict)
    #: the maps --fit fitted (None: not asked)
    fits: dict[str, KindFit] | None = None
    #: what became of them (None: nothing to keep them for)
    kept: MapsKept | None = None
    #: the judge's calls, tokens and time (file mode)
    usage: Any = None
    #: where the --output file was written
    written: Path | None = None


def check_save(fit: bool, save: bool) -> None:
    if save and not fit:
        raise UsageError(
            f"{param('save=True')} writes the maps {param('fit=True')} fits; give "
            f"{param('fit=True')} too"
        )


def calibrate_files(
    request: CalibrationRequest, fit: bool, save: bool, events: CalibrationEvents
) -> CalibrationOutcome:
    """Score the labelled files' rows and measure the judge against their labels; with
    `fit`, fit the maps and keep (with `save`, save) those worth applying."""
    from localeval.results.contract import write_json

    check_save(fit, save)
    with CalibrationRun(request) as calibration:
        events.replacing(calibration.output)
        events.scoring(len(calibration.rows), sorted(calibration.names))
        try:
            result = calibration.run(on_row=events.scored)
        finally:
            events.scoring_ended()
    judge = calibration.tools.judge
    outcome = CalibrationOutcome(result, judge.name if judge is not None else None)
    outcome.fits = calibration.fit(result) if fit else None
    entry = calibration.judge_entry
    if judge is not None and outcome.fits and entry is not None:
        models_file = calibration.models_file if save else None
        outcome.kept = keep_maps(outcome.fits, entry, models_file, BY_DATASET)
    elif judge is not None:
        outcome.thresholds = calibration.suggested(result)
    outcome.usage = judge.usage if judge is not None else None
    if request.output is not None:
        write_json(calibration.output or request.output, calibration.as_dict(result, outcome.fits))
        outcome.written = request.output
    return outcome


@dataclass
class LabelsOutcome(CalibrationOutcome):
    """`calibrate --labels`: also the runs and their labels the figures are of."""

    found: LabelCalibration | None = None


def calibrate_runs(
    refs: Sequence[str],
    output: Path | None,
    fit: bool,
    save: bool,
    models_path: str | None,
    db_path: Location | None,
    events: CalibrationEvents,
) -> LabelsOutcome:
    """`calibrate --labels RUN...`: the judge against the team's labels of the runs, the
    gates that fit it, and with `fit` the maps (with `save`, saved)."""
    from localeval.calibration.labels import calibrate_labels
    from localeval.config import find_models_file, load_models_config
    from localeval.database import database_files, default_db_path
    from localeval.results.contract import check_output, write_json

    check_save(fit, save)
    target = None
    if output is not None:
        # the models file --save writes into is an input here too, as in file mode
        models = [(find_models_file(models_path), "the models file")]
        target = check_output(output, models + database_files(db_path or default_db_path()))
        events.replacing(target)
    found = calibrate_labels(refs, db_path)
    judge = found.judge or "?"
    outcome = LabelsOutcome(found.calibration, judge, found=found)
    outcome.thresholds = suggested_thresholds(found.gate_rows())
    if fit:
        outcome.fits = found.fit()
        models_file = load_models_config(models_path).source if save else None
        outcome.kept = keep_maps(outcome.fits, judge, models_file, BY_FOLD)
    if output is not None:
        write_json(target or output, found.as_dict(outcome.fits))
        outcome.written = output
    return outcome
