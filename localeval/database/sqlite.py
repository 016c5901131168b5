"""The embedded store: one SQLite file (the default, `.localeval/localeval.db`).

`open_sqlite` applies the migrations a file lacks in one IMMEDIATE transaction, the version
read under the write lock: processes that open a new database at the same moment wait for
each other rather than apply a migration twice. A file that holds tables of its own is
never given localeval's. WAL journaling keeps the file consistent if the process is killed
at any moment. `readonly` reads a database that cannot be written (a read-only file or
folder) without changing it.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localeval.database.base import DAMAGED, FAILED, LOCKED, Database, Rows, StoreError
from localeval.database.migrations import MIGRATIONS, SCHEMA_VERSION, check_version, statements
from localeval.errors import UsageError, param

#: SQLite's errors for a file that is no longer a sound database
_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


class SqliteDatabase(Database):
    """A connection to an SQLite file."""

    dialect = "sqlite"

    def __init__(self, connection: sqlite3.Connection, path: Path):
        super().__init__(path)
        self.path = path
        self.connection = connection
        self._closed = False

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        try:
            return self.connection.execute(sql, tuple(params))
        except sqlite3.Error as exc:
            raise self.failure(exc) from None

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            self.connection.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise self.failure(exc) from None

    def driver_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error,)

    def failure(self, exc: BaseException) -> StoreError:
        name = getattr(exc, "sqlite_errorname", None)
        kind = FAILED
        if name in _DAMAGED:
            kind = DAMAGED
        elif name in ("SQLITE_BUSY", "SQLITE_LOCKED"):
            kind = LOCKED
        return StoreError(self.path, str(exc), kind)

    def _begin(self) -> None:
        self.execute("BEGIN IMMEDIATE")

    def _commit(self) -> None:
        self.execute("COMMIT")

    def _rollback(self) -> None:
        if self.connection.in_transaction:  # SQLite ends it itself on a full disk
            self.connection.execute("ROLLBACK")

    def close(self) -> None:
        self._closed = True
        self.connection.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def reopen(self) -> SqliteDatabase:
        connection = sqlite3.connect(
            self.path, timeout=30, isolation_level=None, check_same_thread=False
        )
        connection.execute("PRAGMA foreign_keys = ON")
        return SqliteDatabase(connection, self.path)

    def schema_version(self) -> int:
        return sqlite_version(self.connection)

    def compact(self) -> None:
        # the space of deleted rows back to the file system, and the write-ahead log emptied
        # into the file, so that the file's size is what it holds
        self.execute("VACUUM")
        self.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size(self) -> int | None:
        files = [self.path, self.path.with_name(self.path.name + "-wal")]
        return sum(file.stat().st_size for file in files if file.exists())

    def wait_for_writers(self, milliseconds: int) -> None:
        self.execute(f"PRAGMA busy_timeout = {int(milliseconds)}")


def sqlite_version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def _refuse_foreign(connection: sqlite3.Connection, where: str) -> None:
    """A database without localeval's version that already holds tables is someone else's:
    adding ours would change a file the user did not mean to give."""
    names = [
        row[0]
        for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    if names:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise UsageError(
            f"{where}not a localeval database (it holds other tables: {shown}); it is left as "
            f"it is. Give another {param('db')}"
        )


def migrate_sqlite(connection: sqlite3.Connection, where: str = "") -> None:
    """Apply the migrations this database lacks, all in one IMMEDIATE transaction (`where`:
    how a message names the database, "database PATH: ")."""
    version = sqlite_version(connection)
    check_version(version, where)
    if version == SCHEMA_VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = sqlite_version(connection)  # another process may have migrated meanwhile
        check_version(version, where)
        if version == 0:
            _refuse_foreign(connection, where)
        for sql in MIGRATIONS[version:]:
            for statement in statements(sql):
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def open_sqlite(db: Path, readonly: bool = False) -> SqliteDatabase:
    """Open (creating if needed) and migrate the file; UsageError if it cannot be used.
    `readonly`: open it for reading only, never creating or changing it (a database that can
    be written is migrated first, as always)."""
    _refuse_special(db)
    try:
        if readonly and not _writable(db):
            return SqliteDatabase(_open_read_only(db), db)
        db.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(db, timeout=30, isolation_level=None)
        try:
            migrate_sqlite(connection, f"database {db}: ")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            connection.close()
            raise
    except sqlite3.DatabaseError as exc:
        # on opening, "not a database" is said as it is: --db may name some other file
        name = getattr(exc, "sqlite_errorname", None)
        raise StoreError(db, str(exc), DAMAGED if name == "SQLITE_CORRUPT" else FAILED) from None
    except OSError as exc:
        raise UsageError(f"database {db}: {exc.strerror or exc}") from None
    return SqliteDatabase(connection, db)


def _refuse_special(db: Path) -> None:
    """A device, FIFO or socket is no database: SQLite would fail on it with "disk I/O error"
    and leave a journal file beside it (/dev/null-journal)."""
    try:
        mode = db.stat().st_mode
    except OSError:
        return  # none there yet (or unreadable: opening it says why)
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device, FIFO or socket"
        raise UsageError(f"database {db}: is {kind}, not a database file; give a file's path")


def _writable(db: Path) -> bool:
    """Whether SQLite could write the database and the journal files beside it (access(2)
    also answers for root and for a read-only mount, which permission bits do not)."""
    if not db.exists():
        return True  # reading it says that it does not exist
    folder = db.parent if str(db.parent) else Path(".")
    return os.access(db, os.W_OK) and os.access(folder, os.W_OK)


def _open_read_only(db: Path) -> sqlite3.Connection:
    """A database that cannot be written, opened for reading. SQLite needs to create the
    -shm file beside a WAL database even to read it; where it cannot, the file is read as
    immutable, which is safe because nothing can write there either."""
    wal = db.with_name(db.name + "-wal")
    if wal.exists() and wal.stat().st_size:
        raise UsageError(
            f"database {db}: its write-ahead log {wal.name} holds changes that cannot be read "
            "without write access to its folder"
        )
    uri = f"file:{urllib.parse.quote(os.fspath(db.resolve()))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
        sqlite_version(connection)
    except sqlite3.OperationalError:
        connection = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)
    version = sqlite_version(connection)
    check_version(version, f"database {db}: ")
    if version < SCHEMA_VERSION:
        connection.close()
        raise UsageError(
            f"database {db}: schema version {version} needs upgrading to {SCHEMA_VERSION}, "
            "which needs write access; open it once where it can be written"
        )
    return connection


def probe_write_lock(db: Path, wait_s: float) -> bool:
    """Whether another process holds the file's write lock (waiting `wait_s` for it)."""
    if not db.exists():
        return False
    try:
        probe = sqlite3.connect(db, timeout=wait_s, isolation_level=None)
    except sqlite3.Error as exc:
        raise UsageError(f"database {db}: {exc}") from None
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            return True
        raise UsageError(f"database {db}: {exc}") from None
    finally:
        probe.close()
    return False
