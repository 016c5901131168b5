"""Each kind of error's exit status is chosen by the command line (cli/exit_codes.py), by
the error's type; the errors carry none of their own, but the two a Ray worker still sends
its driver as a status, which must be the command line's choice."""

from __future__ import annotations

import pytest

from localeval.cli.exit_codes import ERROR_STATUSES, exit_code_of
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
from localeval.evaluation.ray.driver import ClusterError, ClusterLost


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
        (ClusterError("on node n: bad option", 2), 2),  # a worker's usage error
    ],
)
def test_each_kind_of_error_has_its_status(error: LocalevalError, status: int) -> None:
    assert exit_code_of(error) == status


def test_errors_carry_no_status_but_what_a_worker_sends() -> None:
    carried = {kind.__name__ for kind in kinds() if "exit_code" in vars(kind)}
    assert carried == {"LocalevalError", "UsageError"}
    for kind in (LocalevalError, UsageError):
        chosen = next(status for base, status in ERROR_STATUSES if issubclass(kind, base))
        assert kind.exit_code == chosen
