"""The store of the run history and the judge/embedding cache, which share one database:
an SQLite file by default (localeval.database.sqlite), or a team's PostgreSQL database
(localeval.database.postgres) when --db or $LOCALEVAL_DB is a `postgresql://` URL.

Both hold the same tables, made by one list of migrations (localeval.database.migrations),
and are used through one interface, `Database`, with the same SQL. Which store a location
opens is chosen in one registry, `STORES`, by the location's kind.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Protocol

from localeval.database.base import DAMAGED, FAILED, LOCKED, LOST, Database, Rows, StoreError
from localeval.database.location import (
    DB_ENV,
    DEFAULT_DB,
    Location,
    ServerUrl,
    database_files,
    db_words,
    default_db_path,
    location_of,
    parse_location,
    refuse_password,
    store_file,
)
from localeval.database.migrations import MIGRATIONS, SCHEMA_VERSION

__all__ = [
    "DAMAGED",
    "DB_ENV",
    "DEFAULT_DB",
    "FAILED",
    "LOCKED",
    "LOST",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "STORES",
    "Database",
    "Location",
    "Rows",
    "ServerUrl",
    "StoreError",
    "database_files",
    "db_words",
    "default_db_path",
    "location_of",
    "open_store",
    "parse_location",
    "refuse_password",
    "schema_version",
    "store_exists",
    "store_file",
    "write_locked",
]


class Store(Protocol):
    """One kind of store, for the locations of one kind (`STORES`). Its driver is imported
    when a location of its kind is opened, never on import."""

    def open(self, location: Location, readonly: bool) -> Database:
        """The store at `location`, created if needed and migrated."""
        ...

    def exists(self, location: Location) -> bool:
        """Whether it holds a run history yet, without creating anything."""
        ...

    def write_locked(self, location: Location, wait_s: float) -> bool:
        """Whether another process holds its write lock (waiting `wait_s` for it)."""
        ...


class SqliteStore:
    """A local SQLite file (localeval.database.sqlite)."""

    def open(self, location: Location, readonly: bool) -> Database:
        from localeval.database.sqlite import open_sqlite

        return open_sqlite(Path(location), readonly)

    def exists(self, location: Location) -> bool:
        return Path(location).exists()

    def write_locked(self, location: Location, wait_s: float) -> bool:
        from localeval.database.sqlite import probe_write_lock

        return probe_write_lock(Path(location), wait_s)


class PostgresStore:
    """A team's PostgreSQL database (localeval.database.postgres)."""

    def open(self, location: Location, readonly: bool) -> Database:
        from localeval.database.postgres import open_postgres

        assert isinstance(location, ServerUrl)
        return open_postgres(location)

    def exists(self, location: Location) -> bool:
        from localeval.database import postgres

        assert isinstance(location, ServerUrl)
        # closing(): the driver's own `with` would also commit, which is not asked here
        with (
            closing(postgres.connect(location)) as connection,
            postgres.opening(connection, location),
        ):
            if postgres.schema_version_of(connection) > 0:
                return True
            postgres.refuse_foreign_or_missing(connection, f"database {location}: ")
            return False

    def write_locked(self, location: Location, wait_s: float) -> bool:
        return False  # a server locks rows, not the database


#: every kind of store, by the kind of location it is at (database/location.py)
STORES: dict[type, Store] = {Path: SqliteStore(), ServerUrl: PostgresStore()}


def _store(location: Location) -> Store:
    return next(store for kind, store in STORES.items() if isinstance(location, kind))


def open_store(location: Location | None = None, readonly: bool = False) -> Database:
    """Open (creating if needed) and migrate the database (default: default_db_path());
    UsageError if it cannot be used. `readonly`: an SQLite file that cannot be written is
    read without being changed (a server's rights are the server's business: a role that
    may only read works on a database that is up to date)."""
    where = location or default_db_path()
    return _store(where).open(where, readonly)


def store_exists(location: Location) -> bool:
    """Whether the database holds a run history yet (a file exists; a server's database has
    localeval's tables), without creating anything; UsageError for a server's database that
    is someone else's (other tables, or a search_path naming no schema)."""
    return _store(location).exists(location)


def schema_version(database: Database) -> int:
    return database.schema_version()


def write_locked(location: Location, wait_s: float) -> bool:
    """Whether another process holds the database's write lock (waiting `wait_s` for it):
    an SQLite file's; a server locks rows, not the database, so never there."""
    return _store(location).write_locked(location, wait_s)
