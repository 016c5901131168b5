"""The Python API: everything the command line does, as calls and objects.

    import localeval

    run = localeval.evaluate("examples/demo.jsonl")  # or a DataFrame, a list of dicts, ...

Each module of this package is one part of it (docs/python.md): `evaluating` the
evaluation (evaluate, estimate_cost), `evaluation` what it returns, `events` what it
tells along the way; `history` the run history (`History`), with diff() and report()
over it; `labelling` a run's labels; `reviewing` the review page as a server;
`calibrating` the judge against labels; `models` the models, the state cache and the
install's checks; `testsets` writing and answering test sets; `pairs` comparing two
answers to each question. Nothing here prints: bad input raises the errors of
localeval.errors, naming the parameter the caller used; what the user may not have meant
is a LocalevalWarning.

A name is imported from its module when first used, so that `import localeval.api` (and
`localeval --help`, whose commands import from here) loads no model library.
"""

from __future__ import annotations

import importlib
from typing import Any

#: every public name, and the module of this package that holds it
NAMES: dict[str, str] = {
    "DEFAULT_DB": "evaluating",
    "DEFAULT_MARGIN": "defaults",
    "DEFAULT_MIN_DEFINED": "defaults",
    "MIN_CHUNK_TOKENS": "defaults",
    "RESUME_MATCHING": "evaluating",
    "RaySettings": "evaluating",
    "diff": "evaluating",
    "estimate_cost": "evaluating",
    "evaluate": "evaluating",
    "report": "evaluating",
    "Decision": "evaluation",
    "Evaluation": "evaluation",
    "EvaluationCost": "evaluation",
    "ClusterPlan": "events",
    "DatasetWarning": "events",
    "EvaluationEvents": "events",
    "LocalevalWarning": "events",
    "SampleResult": "events",
    "StoredRun": "events",
    "Warned": "events",
    "Deletion": "history",
    "History": "history",
    "db_location": "history",
    "CorrectedSummary": "labelling",
    "LabelImport": "labelling",
    "LabelsExported": "labelling",
    "RunCorrected": "labelling",
    "RunLabels": "labelling",
    "ReviewServer": "reviewing",
    "calibrate": "calibrating",
    "calibrate_labels": "calibrating",
    "CalibrationEvents": "calibrating",
    "CalibrationOutcome": "calibrating",
    "LabelsOutcome": "calibrating",
    "MapsKept": "calibrating",
    "OutputTarget": "calibrating",
    "RowScore": "calibrating",
    "CacheReport": "models",
    "Check": "models",
    "check_install": "models",
    "check_models": "models",
    "Cleared": "models",
    "Diagnosis": "models",
    "list_models": "models",
    "Location": "models",
    "Model": "models",
    "ModelList": "models",
    "StateCache": "models",
    "answer_testset": "testsets",
    "AnswerResult": "testsets",
    "DEFAULT_CHUNK_TOKENS": "defaults",
    "DEFAULT_MAX_OVERLAP": "defaults",
    "DEFAULT_MAX_SIMILARITY": "defaults",
    "DEFAULT_MIX_TEXT": "defaults",
    "generate_testset": "testsets",
    "GenerateEstimate": "testsets",
    "GenerateResult": "testsets",
    "KINDS": "defaults",
    "Rejection": "testsets",
    "TestsetAnswering": "testsets",
    "TestsetGeneration": "testsets",
    "Usage": "testsets",
    "AnswerComparison": "pairs",
    "compare_answers": "pairs",
    "PairsOutcome": "pairs",
}

__all__ = sorted(NAMES)


def __getattr__(name: str) -> Any:
    module = NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'localeval.api' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"localeval.api.{module}"), name)
    globals()[name] = value  # later uses skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *NAMES])
