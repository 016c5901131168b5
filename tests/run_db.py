"""What a killed run left in the run-history database, read by the resume tests."""

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
