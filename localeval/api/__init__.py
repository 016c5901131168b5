"""The Python API: everything the command line does, as calls and objects.

    import localeval

    run = localeval.evaluate("examples/demo.jsonl")  # or a DataFrame, a list of dicts, ...

Each module of this package is one part of it (docs/python.md): `evaluating` the
evaluation and its result; `models` the models, the state cache and the install's checks;
`testsets` writing and answering test sets; `pairs` comparing two answers to each
question; `labelling` a run's labels; `reviewing` the review page as a server;
`calibrating` the judge against labels. Nothing here prints: bad input raises the errors of
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
    RunCorrected,
    RunLabels,
)
from localeval.api.models import (
    CacheReport,
    Check,
    Cleared,
    Diagnosis,
    Location,
    Model,
    ModelList,
    StateCache,
    check_install,
    check_models,
    list_models,
)
from localeval.api.pairs import AnswerComparison, PairsOutcome, compare_answers
from localeval.api.reviewing import ReviewServer
from localeval.api.testsets import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_MAX_OVERLAP,
    DEFAULT_MAX_SIMILARITY,
    DEFAULT_MIX_TEXT,
    KINDS,
    AnswerResult,
    GenerateEstimate,
    GenerateResult,
    Rejection,
    TestsetAnswering,
    TestsetGeneration,
    Usage,
    answer_testset,
    generate_testset,
)

__all__ = [
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_DB",
    "DEFAULT_MAX_OVERLAP",
    "DEFAULT_MAX_SIMILARITY",
    "DEFAULT_MIX_TEXT",
    "KINDS",
    "AnswerComparison",
    "AnswerResult",
    "CacheReport",
    "CalibrationEvents",
    "CalibrationOutcome",
    "Check",
    "Cleared",
    "CorrectedSummary",
    "Diagnosis",
    "Evaluation",
    "GenerateEstimate",
    "GenerateResult",
    "LabelImport",
    "LabelsExported",
    "LabelsOutcome",
    "LocalevalWarning",
    "Location",
    "MapsKept",
    "Model",
    "ModelList",
    "OutputTarget",
    "PairsOutcome",
    "Rejection",
    "ReviewServer",
    "RowScore",
    "RunCorrected",
    "RunLabels",
    "StateCache",
    "TestsetAnswering",
    "TestsetGeneration",
    "Usage",
    "answer_testset",
    "calibrate",
    "calibrate_labels",
    "check_install",
    "check_models",
    "compare_answers",
    "diff",
    "evaluate",
    "generate_testset",
    "list_models",
    "report",
]
