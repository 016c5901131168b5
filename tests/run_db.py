"""The database as the tests see it: one as an older localeval left it (the migration
tests), what a killed run left in the run history (read by the resume tests), and which
of the connections opened are still open."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from localeval.database import MIGRATIONS


def database_at_version(path: Path, version: int) -> sqlite3.Connection:
    """A new database at `path` as an older localeval left it: the first `version`
    migrations applied, in autocommit mode for the rows a test puts in."""
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(
        "BEGIN;\n"
        + "\n".join(MIGRATIONS[:version])
        + f"\nPRAGMA user_version = {version};\nCOMMIT;"
    )
    return old


def db_runs(db: Path) -> list[tuple[int, int, str | None]]:
    """(samples stored, samples in the run, finished) of each run, after checking that the
    file is intact."""
    connection = sqlite3.connect(db)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return connection.execute(
            "SELECT (SELECT count(*) FROM run_samples s WHERE s.run_id = runs.id), n_samples, "
            "finished FROM runs ORDER BY rowid"
        ).fetchall()
    finally:
        connection.close()


def stored_in_unfinished_run(db: Path) -> int:
    """Samples stored so far by the run in progress (0 while there is none yet); read-only,
    so that polling a database another process is writing neither creates nor locks it."""
    if not db.exists():
        return 0
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.OperationalError:
        return 0
    try:
        row = connection.execute(
            "SELECT count(*) FROM run_samples s JOIN runs ON s.run_id = runs.id "
            "WHERE runs.finished IS NULL"
        ).fetchone()
        return int(row[0])
    except sqlite3.OperationalError:  # the schema is not written yet
        return 0
    finally:
        connection.close()


def stopped_when_its_judge_dies(
    command: Sequence[str], env: Mapping[str, str], db: Path, kill: Callable[[], None]
) -> None:
    """Start `command` (an evaluate asking a judge server), `kill` the server once the run
    has stored a sample, and check that the run stopped with exit 3, saying to re-run."""
    process = subprocess.Popen(list(command), env=dict(env), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while stored_in_unfinished_run(db) < 1:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    kill()
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 3, stderr
    assert "failed 2 times" in stderr and "re-run the same command" in stderr


class Connections(list[sqlite3.Connection]):
    """Connections opened during a test (the `opened_connections` fixture)."""

    def still_open(self) -> list[sqlite3.Connection]:
        return [c for c in self if not _closed(c)]


def _closed(connection: sqlite3.Connection) -> bool:
    try:
        connection.execute("SELECT 1")
    except sqlite3.ProgrammingError:  # "Cannot operate on a closed database."
        return True
    return False
