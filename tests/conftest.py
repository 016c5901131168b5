from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

#: `pytester` runs a project test suite that uses the rag_quality fixture (test_testing.py)
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def isolated_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own run-history/cache database, never the working folder's."""
    path = tmp_path / "localeval-test.db"
    monkeypatch.setenv("LOCALEVAL_DB", str(path))
    return path
