"""One `with` rule for everything that holds something to close (localeval.closing)."""

from __future__ import annotations

import pytest

from localeval.calibration.calibrating import CalibrationRun
from localeval.closing import Closing
from localeval.database.base import Database
from localeval.estimate.counting import Counting
from localeval.evaluation.scoring import ScoringRun
from localeval.history.store import RunStore
from localeval.labels.store import LabelStore


class Held(Closing):
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_a_with_block_hands_back_the_object_and_closes_it_however_it_ends() -> None:
    held = Held()
    with held as same:
        assert same is held and held.closed == 0
    assert held.closed == 1
    with pytest.raises(ValueError, match="kept"), Held() as failing:
        raise ValueError("kept")  # the error goes on, not swallowed
    assert failing.closed == 1


@pytest.mark.parametrize(
    "kind", [Database, RunStore, LabelStore, ScoringRun, CalibrationRun, Counting]
)
def test_stores_runs_and_estimates_take_the_one_rule_rather_than_their_own(kind: type) -> None:
    assert issubclass(kind, Closing)
    assert "__enter__" not in vars(kind) and "__exit__" not in vars(kind)
