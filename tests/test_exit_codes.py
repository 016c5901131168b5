"""Each kind of error's exit status is chosen by the command line (cli/exit_codes.py), by
the error's type; the errors carry none of their own (a Ray worker's error reaches the
driver as the same kind, WorkerUsageError for a UsageError)."""

from __future__ import annotations

import pytest

from localeval.cli.exit_codes import exit_code_of
from localeval.errors import (
    BudgetSpent,
    ConfigError,
    DatasetError,
    JudgeError,
    LocalevalError,
    MetricFailed,
    RunInUseError,
    UsageError,
)
from localeval.evaluation.ray.driver import ClusterError, ClusterLost, WorkerUsageError


def kinds() -> list[type[LocalevalError]]:
    found, waiting = [], [LocalevalError]
    while waiting:
        kind = waiting.pop()
        found.append(kind)
        waiting.extend(kind.__subclasses__())
    return found


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (UsageError("x"), 2),
        (DatasetError("data.jsonl", "bad", 3), 2),
        (ConfigError("x"), 2),
        (RunInUseError("r", "pid 1", None), 2),
        (JudgeError("x"), 3),
        (MetricFailed("m", "s1", ValueError("x")), 3),
        (LocalevalError("x"), 3),
        (BudgetSpent("--max-calls 3", 1, 6.0, 3), 124),
        (ClusterLost("an actor died"), 4),
        (WorkerUsageError("on node n: another localeval"), 2),
        (ClusterError("a Ray worker failed"), 3),
    ],
)
def test_each_kind_of_error_has_its_status(error: LocalevalError, status: int) -> None:
    assert exit_code_of(error) == status


def test_errors_carry_no_status() -> None:
    assert [
        kind for kind in kinds() if "exit_code" in vars(kind) or "EXIT_CODE" in vars(kind)
    ] == []
