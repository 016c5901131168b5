"""The Python API: everything the command line does, as calls and objects.

    import localeval

    run = localeval.evaluate("examples/demo.jsonl")  # or a DataFrame, a list of dicts, ...

Each module of this package is one part of it (docs/python.md): `evaluating` the
evaluation and its result; `history` the run history (`History`), and diff() and report()
over it. Nothing here prints: bad input raises the errors of
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
from localeval.api.history import Deletion, History
from localeval.database import Location

__all__ = [
    "DEFAULT_DB",
    "Deletion",
    "Evaluation",
    "History",
    "LocalevalWarning",
    "Location",
    "diff",
    "evaluate",
    "report",
]
