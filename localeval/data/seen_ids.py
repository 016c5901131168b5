"""The sample ids a reader has seen, and where, for its duplicate-id check.

A dataset of a million rows is read while it is scored, so the table must not grow the
reading process without bound: the first `IN_MEMORY` ids are kept in a dict, the rest in a
private temporary SQLite database (SQLite deletes its file when the table is closed) whose
page cache is bounded. A file of the usual size never touches the disk.
"""

from __future__ import annotations

import sqlite3

#: ids kept in memory before the table moves to disk: a few MB at most
IN_MEMORY = 20_000
#: the on-disk table's page cache, in KiB (SQLite's negative cache_size)
CACHE_KIB = 1024


class SeenIds:
    """Maps each sample id seen to where it was first seen ("on line 3", "in row 2")."""

    def __init__(self, in_memory: int | None = None) -> None:
        self._in_memory = IN_MEMORY if in_memory is None else in_memory
        self._recent: dict[str, str] = {}
        self._disk: sqlite3.Connection | None = None

    @property
    def held_in_memory(self) -> int:
        """How many ids are held in memory now (the rest are on disk)."""
        return len(self._recent)

    def first(self, sample_id: str) -> str | None:
        """Where `sample_id` was first seen, or None."""
        if (place := self._recent.get(sample_id)) is not None or self._disk is None:
            return place
        row = self._disk.execute("SELECT place FROM seen WHERE id = ?", (sample_id,)).fetchone()
        return None if row is None else row[0]

    def add(self, sample_id: str, place: str) -> None:
        """Remember `sample_id` (not seen before) as seen at `place`."""
        self._recent[sample_id] = place
        if len(self._recent) >= self._in_memory:
            self._spill()

    def close(self) -> None:
        """Forget every id (and delete the on-disk table)."""
        self._recent.clear()
        if self._disk is not None:
            self._disk.close()
            self._disk = None

    def _spill(self) -> None:
        """Move the ids held in memory to the on-disk table (opened on first use)."""
        if self._disk is None:
            try:
                self._disk = _private_table()
            except sqlite3.Error:
                # no temporary folder to write in: stay in memory, correct if larger
                self._in_memory *= 2
                return
        with self._disk:
            self._disk.executemany("INSERT INTO seen VALUES (?, ?)", self._recent.items())
        self._recent.clear()


def _private_table() -> sqlite3.Connection:
    """A temporary on-disk database (an empty file name) holding the table `seen`."""
    connection = sqlite3.connect("", check_same_thread=False)
    try:
        connection.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute("CREATE TABLE seen (id TEXT PRIMARY KEY, place TEXT) WITHOUT ROWID")
    except sqlite3.Error:
        connection.close()
        raise
    return connection
