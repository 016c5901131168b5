"""The shared store: a PostgreSQL database, through psycopg 3 (libpq: PGPASSWORD,
~/.pgpass, PGSERVICE, sslmode and the rest of libpq's settings apply as they always do).

The schema is the SQLite store's migrations, translated (localeval.database.migrations), its
version kept in the table `localeval_schema` (SQLite's `PRAGMA user_version`). Migrations
run in one transaction under an advisory lock: processes on several machines that open an
empty database at once wait for each other, one migrates, all go on.
A run's lease is also held as a session-level advisory lock, which the server lets go of
when the connection ends: a writer killed on any machine frees its run at once.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Loader
from psycopg.pq import TransactionStatus

from localeval.database.base import FAILED, LOST, Database, Rows, StoreError
from localeval.database.location import PASSWORD_ADVICE, ServerUrl
from localeval.database.migrations import (
    MIGRATIONS,
    SCHEMA_VERSION,
    check_version,
    postgres_ddl,
    statements,
)
from localeval.database.stall import TIMEOUT_ENV, Stalled, answered_within, statement_limit
from localeval.errors import UsageError, param

#: the oldest server accepted: the features used (identity columns, ON CONFLICT, advisory
#: locks) are in 10; 13 is the oldest release its project maintained when this was written
MIN_SERVER_VERSION = 130000
#: where the schema's version is kept (SQLite: PRAGMA user_version)
VERSION_TABLE = "localeval_schema"
#: seconds a connection may be silent before the server asks whether its client is there
KEEPALIVE_S = 60
#: seconds to wait for a server that does not answer (unless the URL or PGCONNECT_TIMEOUT say)
CONNECT_TIMEOUT_S = 10


def _lock_key(name: str) -> int:
    """A 64-bit advisory lock key for a name (signed, as PostgreSQL's bigint)."""
    digest = hashlib.sha256(f"localeval {name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


_MIGRATION_LOCK = _lock_key("schema migration")


class _Number(Loader):
    """NUMERIC (what sum() of integers gives) as int or float, as SQLite answers: never a
    Decimal, which JSON cannot write."""

    def load(self, data: Any) -> int | float:
        text = bytes(data).decode("ascii")
        return int(text) if text.lstrip("-").isdigit() else float(text)


@functools.lru_cache(maxsize=1024)
def _numbered(sql: str) -> str:
    """`?` placeholders (outside quotes) as PostgreSQL's $1, $2, ..."""
    out: list[str] = []
    quote: str | None = None
    count = 0
    for char in sql:
        if quote is not None:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "?":
            count += 1
            char = f"${count}"
        out.append(char)
    return "".join(out)


class PostgresDatabase(Database):
    """A connection to a PostgreSQL database."""

    dialect = "postgresql"

    def __init__(self, connection: psycopg.Connection[Any], url: ServerUrl):
        super().__init__(url)
        self.url = url
        self.connection = connection
        self._leases: set[str] = set()
        self._socket = connection.fileno()
        self._limit = statement_limit()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        try:
            with answered_within(self._socket, self._limit):
                return self.connection.execute(_numbered(sql), tuple(params))  # type: ignore[return-value]
        except Stalled as exc:
            raise StoreError(self.url, f"{exc}; ${TIMEOUT_ENV} sets the limit", LOST) from None
        except psycopg.Error as exc:
            raise self.failure(exc) from None

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            with answered_within(self._socket, self._limit), self.connection.cursor() as cursor:
                cursor.executemany(_numbered(sql), rows)
        except Stalled as exc:
            raise StoreError(self.url, f"{exc}; ${TIMEOUT_ENV} sets the limit", LOST) from None
        except psycopg.Error as exc:
            raise self.failure(exc) from None

    def driver_errors(self) -> tuple[type[BaseException], ...]:
        return (psycopg.Error,)

    def failure(self, exc: BaseException) -> StoreError:
        detail = one_line(exc)
        sqlstate = getattr(exc, "sqlstate", None) or ""
        lost = self.connection.broken or self.connection.closed
        if lost or sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03"):
            return StoreError(self.url, detail, LOST)
        return StoreError(self.url, detail, FAILED)

    def _begin(self) -> None:
        self.execute("BEGIN")

    def _commit(self) -> None:
        self.execute("COMMIT")

    def _rollback(self) -> None:
        connection = self.connection
        if not connection.broken and connection.info.transaction_status != TransactionStatus.IDLE:
            connection.execute("ROLLBACK")

    def close(self) -> None:
        self._leases.clear()
        self.connection.close()

    @property
    def closed(self) -> bool:
        return self.connection.closed

    def __del__(self) -> None:
        # a thread's own connection (the cache's, samples in flight) ends with the thread
        connection = getattr(self, "connection", None)
        if connection is not None and not connection.closed:
            connection.close()

    def reopen(self) -> PostgresDatabase:
        return PostgresDatabase(connect(self.url), self.url)

    def schema_version(self) -> int:
        return schema_version_of(self.connection)

    def lock(self, name: str) -> None:
        self.execute("SELECT pg_advisory_xact_lock(?)", (_lock_key(name),))

    def hold_lease(self, run_id: str) -> bool | None:
        if run_id in self._leases:
            return True
        row = self.execute("SELECT pg_try_advisory_lock(?)", (_lock_key(f"run {run_id}"),))
        if not row.fetchone()[0]:
            return False
        self._leases.add(run_id)
        return True

    def drop_lease(self, run_id: str) -> None:
        if run_id in self._leases:
            self._leases.discard(run_id)
            self.execute("SELECT pg_advisory_unlock(?)", (_lock_key(f"run {run_id}"),))

    def lease_held_elsewhere(self, run_id: str) -> bool | None:
        if run_id in self._leases:
            return False
        key = _lock_key(f"run {run_id}")
        if not self.execute("SELECT pg_try_advisory_lock(?)", (key,)).fetchone()[0]:
            return True
        self.execute("SELECT pg_advisory_unlock(?)", (key,))
        return False


#: what libpq puts before the server's own words when a connection fails
_CONNECTION_FAILED = re.compile(r'^connection to server (at|on) "[^"]*"(, port \d+)? failed: ')


def one_line(exc: BaseException) -> str:
    """The driver's message on one line. libpq's messages hold no password, so nothing is
    masked in it (a mask over the server's words garbles them and shows where the password's
    letters are)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text.removeprefix("connection failed: ")


def connect(url: ServerUrl) -> psycopg.Connection[Any]:
    """A new connection in autocommit mode; UsageError when the server cannot be reached or
    refuses the login, naming the URL without its password."""
    given = url.settings
    options: dict[str, Any] = {"autocommit": True, "cursor_factory": psycopg.RawCursor}
    if "connect_timeout" not in given and "PGCONNECT_TIMEOUT" not in os.environ:
        options["connect_timeout"] = CONNECT_TIMEOUT_S
    if "application_name" not in given and "PGAPPNAME" not in os.environ:
        options["application_name"] = "localeval"
    # this side probes a silent server too: a server's machine gone (power, network) ends a
    # statement's wait within KEEPALIVE_S + 6 probes 10 s apart
    probes = {"keepalives_idle": KEEPALIVE_S, "keepalives_interval": 10, "keepalives_count": 6}
    options |= {key: value for key, value in probes.items() if key not in given}
    try:
        connection = psycopg.connect(url.url, **options)
    except psycopg.Error as exc:
        raise UsageError(_connect_message(url, exc)) from None
    version = connection.info.server_version
    if version < MIN_SERVER_VERSION:
        connection.close()
        raise UsageError(
            f"database {url}: PostgreSQL {_release(version)} is older than localeval supports "
            f"({_release(MIN_SERVER_VERSION)} or newer); nothing was written"
        )
    connection.adapters.register_loader("numeric", _Number)
    # a writer's machine that vanishes without closing its connection (power, network) is
    # noticed by the server within KEEPALIVE_S + 6 probes 10 s apart, and its lease freed;
    # a statement that runs longer than the limit is ended by the server (a stalled server
    # is left by the client: localeval.database.stall)
    with opening(connection, url):
        connection.execute(
            "SELECT set_config('tcp_keepalives_idle', $1, false), "
            "set_config('tcp_keepalives_interval', '10', false), "
            "set_config('tcp_keepalives_count', '6', false), "
            "set_config('statement_timeout', $2, false)",
            (str(KEEPALIVE_S), str(int(statement_limit() * 1000))),
        )
    return connection


@contextmanager
def opening(connection: psycopg.Connection[Any], url: ServerUrl) -> Iterator[None]:
    """Statements sent while a database is opened, under the statement limit too: a server
    that stops answering then is left with one line (and the connection closed)."""
    try:
        with answered_within(connection.fileno(), statement_limit()):
            yield
    except Stalled as exc:
        connection.close()
        raise UsageError(
            f"database {url}: {exc} while opening it; ${TIMEOUT_ENV} sets the limit. Nothing "
            "was written"
        ) from None


def _connect_message(url: ServerUrl, exc: psycopg.Error) -> str:
    """Why a connection failed, in words (libpq gives no SQLSTATE for it: its words say)."""
    detail = one_line(exc)
    said = _CONNECTION_FAILED.sub("", detail).removeprefix("FATAL:").strip()
    where = f"database {url}: "
    if "authentication failed" in said:
        return (
            f"{where}the server refused the login (a wrong password, or no such role); "
            f"{PASSWORD_ADVICE}"
        )
    if "no password supplied" in said:
        return f"{where}the server asks for a password and none was given; {PASSWORD_ADVICE}"
    if said.startswith("database ") and said.endswith(" does not exist"):
        return f"{where}{said}; create it first (createdb, or CREATE DATABASE: docs/team.md)"
    return f"{where}cannot connect ({detail})"


def open_postgres(url: ServerUrl) -> PostgresDatabase:
    """Connect, check the server and apply the migrations the database lacks; UsageError
    (nothing written) when it cannot be used."""
    connection = connect(url)
    where = f"database {url}: "
    try:
        with opening(connection, url):
            migrate_postgres(connection, where)
    except psycopg.Error as exc:
        connection.close()
        raise UsageError(_migration_message(url, exc)) from None
    except BaseException:
        connection.close()
        raise
    return PostgresDatabase(connection, url)


def _release(version: int) -> str:
    return (
        f"{version // 10000}" if version % 10000 == 0 else f"{version // 10000}.{version % 10000}"
    )


def _migration_message(url: ServerUrl, exc: psycopg.Error) -> str:
    detail = one_line(exc)
    where = f"database {url}: "
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return (
            f"{where}this role may not create or change localeval's tables ({detail}); "
            "nothing was written. Its owner grants the rights once (docs/team.md)"
        )
    if isinstance(exc, pg_errors.InvalidSchemaName):
        return f"{where}{detail}: no schema of its search_path exists; nothing was written"
    return f"{where}{detail}; nothing was written"


def schema_version_of(connection: psycopg.Connection[Any]) -> int:
    """The schema's version, 0 for a database without localeval's tables (read from the
    catalog with the statement's snapshot, as the tables are created: in current_schema())."""
    found = connection.execute(
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = $1",
        (VERSION_TABLE,),
    ).fetchone()
    if found is None:
        return 0
    row = connection.execute(f"SELECT max(version) FROM {VERSION_TABLE}").fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def migrate_postgres(
    connection: psycopg.Connection[Any], where: str = "", target: int = SCHEMA_VERSION
) -> None:
    """Apply the migrations the database lacks (up to version `target`: the tests make the
    databases older localevals left), in one transaction, under the migration lock (taken
    only when there is something to do). The lock is the session's, taken before the
    transaction starts: a transaction that began before another process's migration
    committed could still see its tables as missing."""
    version = schema_version_of(connection)
    check_version(version, where)
    if version >= target:
        return
    connection.execute("SELECT pg_advisory_lock($1)", (_MIGRATION_LOCK,))
    try:
        with connection.transaction():
            version = schema_version_of(connection)  # another process may have migrated
            check_version(version, where)
            if version >= target:
                return
            if version == 0:
                _refuse_foreign(connection, where)
                connection.execute(f"CREATE TABLE {VERSION_TABLE} (version BIGINT NOT NULL)")
                connection.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (0)")
            for sql in MIGRATIONS[version:target]:
                for statement in statements(sql):
                    connection.execute(postgres_ddl(statement))
            connection.execute(f"UPDATE {VERSION_TABLE} SET version = $1", (target,))
    finally:
        if not connection.broken:
            connection.execute("SELECT pg_advisory_unlock($1)", (_MIGRATION_LOCK,))


def refuse_foreign_or_missing(connection: psycopg.Connection[Any], where: str) -> None:
    """For a database without localeval's tables, read by a command that creates none: a
    search_path that names no existing schema, or a schema holding other tables, is refused
    as `evaluate` refuses it (rather than read as a history with no runs yet)."""
    if connection.execute("SELECT current_schema()").fetchone()[0] is None:
        raise UsageError(
            f"{where}no schema of its search_path exists; create the schema first (CREATE "
            "SCHEMA, docs/team.md) or name an existing one (?options=-csearch_path%3DNAME)"
        )
    _refuse_foreign(connection, where)


def _refuse_foreign(connection: psycopg.Connection[Any], where: str) -> None:
    """A schema without localeval's version that holds tables is someone else's."""
    rows = connection.execute(  # pg_tables lists tables this role may not read, too
        "SELECT tablename FROM pg_catalog.pg_tables "
        "WHERE schemaname = current_schema() ORDER BY tablename"
    ).fetchall()
    names = [row[0] for row in rows]
    if names:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise UsageError(
            f"{where}not a localeval database (its schema holds other tables: {shown}); it is "
            f"left as it is. Give another {param('db')}, or a schema of localeval's own "
            "(?options=-csearch_path%3Dlocaleval, docs/team.md)"
        )
