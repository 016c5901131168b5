from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def run_history_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own run-history database, never the working folder's."""
    db = tmp_path / "history.db"
    monkeypatch.setenv("LOCALEVAL_DB", str(db))
    return db
