"""The database as the tests see it, an SQLite file or a PostgreSQL database alike: one as an
older localeval left it (the migration tests), what a killed run left in the run history
(read by the resume tests), and which of the connections opened are still open."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.database import MIGRATIONS, Database, Location, ServerUrl, StoreError
from localeval.database.sqlite import SqliteDatabase


def as_setting(db: Location) -> str:
    """The database as $LOCALEVAL_DB or --db names it (a test's URLs hold no password)."""
    return db.url if isinstance(db, ServerUrl) else str(db)


def database_name(url: ServerUrl) -> str:
    """The name of a server's database, as the tests' URLs give it."""
    return url.url.rsplit("/", 1)[1].split("?")[0]


def database_at_version(db: Location, version: int) -> Database:
    """A new database at `db` as an older localeval left it: the first `version` migrations
    applied, in autocommit mode for the rows a test puts in (`?` placeholders)."""
    if isinstance(db, Path):
        old = sqlite3.connect(db, isolation_level=None)
        old.executescript(
            "BEGIN;\n"
            + "\n".join(MIGRATIONS[:version])
            + f"\nPRAGMA user_version = {version};\nCOMMIT;"
        )
        return SqliteDatabase(old, db)
    from localeval.database.postgres import PostgresDatabase, connect, migrate_postgres

    connection = connect(db)
    migrate_postgres(connection, target=version)
    return PostgresDatabase(connection, db)


def database_before(db: Location, marker: str) -> Database:
    """A new database at `db` as localeval left it just before the migration whose SQL
    holds `marker` (database_at_version)."""
    version = next(i for i, sql in enumerate(MIGRATIONS) if marker in sql)
    return database_at_version(db, version)


def add_old_run(old: Database, prompt_version: str = "") -> None:
    """Run 'r' (BLEU, 2 samples) with the columns every schema since the first has."""
    old.execute(
        "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, n_samples, "
        "prompt_version, metrics, metric_settings, thresholds, localeval_version) "
        "VALUES ('r', 't', 'f', 'd', 's', 2, ?, '[\"bleu\"]', '{}', '{}', 'v')",
        (prompt_version,),
    )


def reader(db: Location) -> Database:
    """A plain connection to the database, which must exist; nothing is migrated."""
    if isinstance(db, Path):
        return SqliteDatabase(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5), db)
    from localeval.database.postgres import PostgresDatabase, connect

    return PostgresDatabase(connect(db), db)


def query(db: Location, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    """The rows of one query (`?` placeholders), read through a connection of its own."""
    connection = reader(db)
    try:
        return [tuple(row) for row in connection.execute(sql, params).fetchall()]
    finally:
        connection.close()


def write(db: Location, sql: str, params: Sequence[Any] = ()) -> None:
    """Run one statement (`?` placeholders) in a connection of its own, committed."""
    if isinstance(db, Path):
        connection = SqliteDatabase(sqlite3.connect(db, isolation_level=None), db)
    else:
        connection = reader(db)
    try:
        connection.execute(sql, params)
    finally:
        connection.close()


def db_runs(db: Location) -> list[tuple[int, int, str | None]]:
    """(samples stored, samples in the run, finished) of each run, after checking that an
    SQLite file is intact."""
    if isinstance(db, Path):
        assert query(db, "PRAGMA integrity_check") == [("ok",)]
    return query(
        db,
        "SELECT (SELECT count(*) FROM run_samples s WHERE s.run_id = runs.id), n_samples, "
        "finished FROM runs ORDER BY rowid",
    )


#: the connection each server's database is polled through (a login costs more CPU than
#: the query, and a test polls a hundred times a second)
_POLLING: dict[str, Database] = {}


def stored_in_unfinished_run(db: Location) -> int:
    """Samples stored so far by the run in progress (0 while there is none yet); read-only,
    so that polling a database another process is writing neither creates nor locks it."""
    if isinstance(db, Path) and not db.exists():
        return 0
    sql = (
        "SELECT count(*) FROM run_samples s JOIN runs ON s.run_id = runs.id "
        "WHERE runs.finished IS NULL"
    )
    try:
        if isinstance(db, Path):
            return int(query(db, sql)[0][0])
        if db.url not in _POLLING:
            _POLLING[db.url] = reader(db)
        return int(_POLLING[db.url].execute(sql).fetchone()[0])
    except (StoreError, sqlite3.Error):  # the schema is not written yet, a server gone
        polled = None if isinstance(db, Path) else _POLLING.pop(db.url, None)
        if polled is not None:
            polled.close()
        return 0


def stopped_when_its_judge_dies(
    command: Sequence[str], env: Mapping[str, str], db: Location, kill: Callable[[], None]
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


class Connections(list[Database]):
    """Connections opened during a test (the `opened_connections` fixture)."""

    def still_open(self) -> list[Database]:
        return [c for c in self if not c.closed]


def table_names(connection: Database) -> set[str]:
    """The tables of the database's schema."""
    if isinstance(connection.location, Path):
        sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
    else:
        sql = (
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    return {row[0] for row in connection.execute(sql)}


def column_names(connection: Database, table: str) -> list[str]:
    """A table's columns in their order (not PostgreSQL's `rowid`, which SQLite's implicit
    one stands for)."""
    if isinstance(connection.location, Path):
        return [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
    rows = connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = "
        "current_schema() AND table_name = ? ORDER BY ordinal_position",
        (table,),
    )
    return [row[0] for row in rows if row[0] != "rowid"]
