"""The Python API: everything the command line does, as calls and objects.

    import localeval

    run = localeval.evaluate("examples/demo.jsonl")  # or a DataFrame, a list of dicts, ...

Each module of this package is one part of it (docs/python.md): `evaluating` the
evaluation (evaluate, estimate_cost, diff, report), `evaluation` what it returns, `events` what
it tells along the way. Nothing here prints: bad input raises the errors of
localeval.errors, naming the parameter the caller used; what the user may not have meant
is a LocalevalWarning.
"""

from __future__ import annotations

from localeval.api.evaluating import (
    DEFAULT_DB,
    DEFAULT_MARGIN,
    RESUME_MATCHING,
    RaySettings,
    diff,
    estimate_cost,
    evaluate,
    report,
)
from localeval.api.evaluation import Decision, Evaluation, EvaluationCost
from localeval.api.events import (
    ClusterPlan,
    DatasetWarning,
    EvaluationEvents,
    LocalevalWarning,
    SampleResult,
    StoredRun,
    Warned,
)

__all__ = [
    "DEFAULT_DB",
    "DEFAULT_MARGIN",
    "RESUME_MATCHING",
    "ClusterPlan",
    "DatasetWarning",
    "Decision",
    "Evaluation",
    "EvaluationCost",
    "EvaluationEvents",
    "LocalevalWarning",
    "RaySettings",
    "SampleResult",
    "StoredRun",
    "Warned",
    "diff",
    "estimate_cost",
    "evaluate",
    "report",
]
