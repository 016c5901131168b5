"""The library's small promises (issue 52, item 10): a gate's interval is a list as in
results.json, a `db` that names no database is a typed error naming the parameter, and a
warning points at the caller's line, not at localeval's own."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
from test_api import ROW, faithful

import localeval
from localeval.errors import UsageError
from localeval.results.gates import CORRECTED, GateResult


def test_a_gate_on_the_corrected_mean_gives_its_interval_as_a_list() -> None:
    gate = GateResult("faithfulness", 0.6, 0.686, True, reads=CORRECTED, interval=(0.61, 0.75))
    entry = gate.as_dict()
    assert entry["ci95"] == [0.61, 0.75]
    assert entry == json.loads(json.dumps(entry))  # the same as results.json holds it


@pytest.mark.parametrize(
    ("db", "message"),
    [
        (5, "db: expected a file path or a postgresql:// URL, got int"),
        (["h.db"], "db: expected a file path or a postgresql:// URL, got list"),
        ("", "db: empty; give a file path or a postgresql:// URL"),
        (" ", "db: empty; give a file path or a postgresql:// URL"),
    ],
)
def test_a_db_that_names_no_database_is_refused_and_creates_nothing(
    db: object, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=message):
        localeval.evaluate([ROW], ["faithfulness"], tools=faithful(), db=db, progress=False)
    assert os.listdir(tmp_path) == []


def test_a_warning_points_at_the_callers_line(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        localeval.evaluate(
            [ROW | {"sorce": "x"}], ["faithfulness"], tools=faithful(), db=None, progress=False
        )
    ours = [w for w in caught if issubclass(w.category, localeval.LocalevalWarning)]
    assert ours, [str(w.message) for w in caught]
    assert {Path(w.filename).name for w in ours} == {Path(__file__).name}
