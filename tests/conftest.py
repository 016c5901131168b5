from __future__ import annotations

import itertools
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pg_server import PostgresServer
from run_db import Connections, as_setting
from standins import StandIns

from localeval.database import Database, Location, ServerUrl

#: `pytester` runs a project test suite that uses the rag_quality fixture (test_testing.py)
pytest_plugins = ["pytester"]


def pytest_configure(config: pytest.Config) -> None:
    """A pytest started in the background by a shell without job control (`pytest &` in a
    script or a CI step) inherits SIGINT ignored, and so would every process it starts: the
    tests that press Ctrl-C on a localeval process would press it in vain (the process runs
    on to the end). Handled here as Python does by default, SIGINT reaches the children
    with its default action (an exec resets a handler, never an ignored signal)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: the stores a test marked `both_stores` runs against, one after the other
STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test (or module) marked `both_stores` runs once with an SQLite file and once with a
    database on the tests' PostgreSQL server: `isolated_database` is the one of the run."""
    if metafunc.definition.get_closest_marker("both_stores") is not None:
        metafunc.parametrize("isolated_database", STORES, indirect=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the session (tests/pg_server.py), started on the first
    test that needs it; AssertionError saying how to install it where it is missing."""
    server = PostgresServer().init().start()
    try:
        server.create_roles()
        yield server
    finally:
        server.remove()


_DATABASES = itertools.count()


@pytest.fixture
def postgres_database(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> ServerUrl:
    """A new, empty database of the tests' server, owned by the `localeval` role, whose
    password this process (and its children) read from a password file, as from ~/.pgpass."""
    for name, value in postgres_server.environment().items():
        monkeypatch.setenv(name, value)
    return ServerUrl(postgres_server.create_database(f"test_{next(_DATABASES)}"))


@pytest.fixture(autouse=True)
def isolated_database(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Location:
    """Every test gets its own run-history/cache database, never the working folder's: a
    file, or (a test marked `both_stores`, in its postgres run) a new database on the tests'
    PostgreSQL server ($LOCALEVAL_DB names it); and its own cache folder (where measured
    speeds are kept), never the user's."""
    location: Location = tmp_path / "localeval-test.db"
    if getattr(request, "param", "sqlite") == "postgres":
        location = request.getfixturevalue("postgres_database")
    monkeypatch.setenv("LOCALEVAL_DB", as_setting(location))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    return location


@pytest.fixture
def new_database(
    request: pytest.FixtureRequest, isolated_database: Location, tmp_path: Path
) -> Callable[[], Location]:
    """Makes more new, empty databases of the same kind as the test's."""
    count = itertools.count()

    def new() -> Location:
        if isinstance(isolated_database, Path):
            return tmp_path / f"more-{next(count)}.db"
        server: PostgresServer = request.getfixturevalue("postgres_server")
        return ServerUrl(server.create_database(f"test_{next(_DATABASES)}"))

    return new


@pytest.fixture
def another_database(new_database: Callable[[], Location]) -> Location:
    """A second database of the same kind as the test's (for copying between two)."""
    return new_database()


@pytest.fixture
def db(isolated_database: Location) -> Location:
    """The test's database (isolated_database), for a test that names it."""
    return isolated_database


@pytest.fixture(autouse=True)
def stand_ins(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[StandIns]:
    """The test's own judge and embedder, selected by name (see standins.py); registered
    for every test, so that a models.toml naming them always loads."""
    registered = StandIns(tmp_path_factory.mktemp("stand-ins"), monkeypatch)
    yield registered
    registered.close()


#: a judge's GGUF file larger than this takes minutes to load and run on a busy CI machine:
#: only a test marked real_models (or real_server) may load its weights (SmolLM2-135M,
#: about 100 MB, loads in a second and stays allowed)
UNMARKED_WEIGHTS_LIMIT = 200 * 1024 * 1024


@pytest.fixture(autouse=True)
def no_large_judge_unmarked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refuse to load a large judge's weights in a test not marked for it, so that a test
    that reaches the real default judge by mistake (a missing stand-in) fails at once
    instead of taking minutes."""
    if any(request.node.get_closest_marker(m) for m in ("real_models", "real_server")):
        return
    from localeval.backends.llama_judge import LlamaJudge

    loading = LlamaJudge.__init__

    def refusing(self: LlamaJudge, name: str, settings: Any) -> None:
        path = Path(settings.path)
        if not self.vocab_only and path.is_file() and path.stat().st_size > UNMARKED_WEIGHTS_LIMIT:
            pytest.fail(
                f"an unmarked test loads the weights of judge {name!r}: mark it real_models"
            )
        loading(self, name, settings)

    monkeypatch.setattr(LlamaJudge, "__init__", refusing)


@pytest.fixture
def opened_connections(monkeypatch: pytest.MonkeyPatch) -> Connections:
    """Every connection the judge/embedding cache opens during the test, to check that the
    code which opened it also closed it."""
    from localeval.tools import cache

    opened = Connections()
    real = cache.open_store

    def recording(*args: Any, **kwargs: Any) -> Database:
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
