"""The Python API: everything the command line does, as calls and objects.

    import localeval

    run = localeval.evaluate("examples/demo.jsonl")  # or a DataFrame, a list of dicts, ...

Each module of this package is one part of it (docs/python.md): `evaluating` the
evaluation and its result. Nothing here prints: bad input raises the errors of
localeval.errors, naming the parameter the caller used; what the user may not have meant
is a LocalevalWarning.
"""

from __future__ import annotations

from localeval.api.calibrating import (
    CalibrationEvents,
    CalibrationOutcome,
    LabelsOutcome,
    MapsKept,
    OutputTarget,
    RowScore,
    calibrate,
    calibrate_labels,
)
from localeval.api.evaluating import (
    DEFAULT_DB,
    Evaluation,
    LocalevalWarning,
    diff,
    evaluate,
    report,
)
from localeval.api.labelling import (
    CorrectedSummary,
    LabelImport,
    LabelsExported,
    Location,
    RunCorrected,
    RunLabels,
)
from localeval.api.reviewing import ReviewServer

__all__ = [
    "DEFAULT_DB",
    "CalibrationEvents",
    "CalibrationOutcome",
    "CorrectedSummary",
    "Evaluation",
    "LabelImport",
    "LabelsExported",
    "LabelsOutcome",
    "LocalevalWarning",
    "Location",
    "MapsKept",
    "OutputTarget",
    "ReviewServer",
    "RowScore",
    "RunCorrected",
    "RunLabels",
    "calibrate",
    "calibrate_labels",
    "diff",
    "evaluate",
    "report",
]
