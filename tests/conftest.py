from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from run_db import Connections
from standins import StandIns

#: `pytester` runs a project test suite that uses the rag_quality fixture (test_testing.py)
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def isolated_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own run-history/cache database, never the working folder's, and
    its own cache folder (where measured speeds are kept), never the user's."""
    path = tmp_path / "localeval-test.db"
    monkeypatch.setenv("LOCALEVAL_DB", str(path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    return path


@pytest.fixture(autouse=True)
def stand_ins(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[StandIns]:
    """The test's own judge and embedder, selected by name (see standins.py); registered
    for every test, so that a models.toml naming them always loads."""
    registered = StandIns(tmp_path_factory.mktemp("stand-ins"), monkeypatch)
    yield registered
    registered.close()


@pytest.fixture
def opened_connections(monkeypatch: pytest.MonkeyPatch) -> Connections:
    """Every connection the judge/embedding cache opens during the test, to check that the
    code which opened it also closed it."""
    from localeval.tools import cache

    opened = Connections()
    real = cache.open_store

    def recording(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection = real(*args, **kwargs)
        opened.append(connection)
        return connection

    monkeypatch.setattr(cache, "open_store", recording)
    return opened


@pytest.fixture(scope="session")
def llama_server_binary() -> Path:
    """llama.cpp's llama-server for this CPU: built once (minutes) and cached, or taken
    from the cache (seconds), by scripts/llama_server_build.py; the real_server tests."""
    from llama_server import build_llama_server

    return build_llama_server()


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A Ray cluster on this machine for the tests marked `ray` (tests/ray_cluster.py),
    started at the first test that asks for it and stopped when the session ends."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:  # not imported: ray_head sets it up first
        pytest.skip("Ray is not installed: pip install 'localeval[ray]'")
    from ray_cluster import ray_head

    with ray_head() as cluster:
        yield cluster
