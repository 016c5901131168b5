"""The Python API: everything the command line does, as calls and objects.

    import localeval

    run = localeval.evaluate("examples/demo.jsonl")  # or a DataFrame, a list of dicts, ...

Each module of this package is one part of it (docs/python.md): `evaluating` the
evaluation and its result; `models` the models, the state cache and the install's checks;
`testsets` writing and answering test sets; `pairs` comparing two answers to each
question. Nothing here prints: bad input raises the errors of
localeval.errors, naming the parameter the caller used; what the user may not have meant
is a LocalevalWarning.
"""

from __future__ import annotations

from localeval.api.evaluating import (
    DEFAULT_DB,
    Evaluation,
    LocalevalWarning,
    diff,
    evaluate,
    report,
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
    "Check",
    "Cleared",
    "Diagnosis",
    "Evaluation",
    "GenerateEstimate",
    "GenerateResult",
    "LocalevalWarning",
    "Location",
    "Model",
    "ModelList",
    "PairsOutcome",
    "Rejection",
    "StateCache",
    "TestsetAnswering",
    "TestsetGeneration",
    "Usage",
    "answer_testset",
    "check_install",
    "check_models",
    "compare_answers",
    "diff",
    "evaluate",
    "generate_testset",
    "list_models",
    "report",
]
