"""The exit status of each outcome and kind of error (docs/reference.md), chosen here and
nowhere else: the library raises typed errors (localeval.errors) and returns values."""

from __future__ import annotations

from localeval.errors import BudgetSpent, ClusterLost, LocalevalError, UsageError

EXIT_OK, EXIT_GATE_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
#: a Ray cluster lost what the run needs; the run is kept for the same command to continue
EXIT_CLUSTER_LOST = 4
#: as GNU timeout's status: stopped at a limit it was given (--max-minutes, --max-calls)
EXIT_BUDGET_SPENT = 124
#: the shell's statuses for a process stopped by SIGINT (Ctrl-C) and by SIGTERM
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143

#: each kind of error's status, the first that matches counting (a subclass before its base)
ERROR_STATUSES: tuple[tuple[type[LocalevalError], int], ...] = (
    (ClusterLost, EXIT_CLUSTER_LOST),
    (BudgetSpent, EXIT_BUDGET_SPENT),
    (UsageError, EXIT_USAGE),
    (LocalevalError, EXIT_INTERNAL),
)


def exit_code_of(error: LocalevalError) -> int:
    """The status the command exits with for this error."""
    return next(status for kind, status in ERROR_STATUSES if isinstance(error, kind))
