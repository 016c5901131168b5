"""The database as the tests see it: what a killed run left in the run history (read by
the resume tests), and which of the connections opened are still open."""

from __future__ import annotations

import sqlite3
from pathlib import Path


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
