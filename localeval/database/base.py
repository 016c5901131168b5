"""What the rest of localeval sees of a store, SQLite or PostgreSQL: `Database`, one
connection with the same SQL for both (`?` placeholders, SQLite's dialect where the two
agree: `INSERT ... ON CONFLICT`, `RETURNING`), transactions, and failures as `StoreError`:
one line that names the database (a URL without its password) and what was being done.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Protocol

from localeval.closing import Closing
from localeval.database.location import Location, store_file
from localeval.errors import UsageError, param


class Rows(Protocol):
    """What a query answers with (a DB-API cursor)."""

    rowcount: int

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


#: what a failure is, as far as the advice for it goes
FAILED, DAMAGED, LOCKED, LOST = "failed", "damaged", "locked", "lost"


class StoreError(UsageError):
    """A database operation failed. `detail`: the driver's words (one line); `kind`: one of
    FAILED, DAMAGED, LOCKED, LOST; `doing`: what localeval was doing ("" while opening)."""

    def __init__(self, location: Location, detail: str, kind: str = FAILED, doing: str = ""):
        self.location, self.detail, self.kind, self.doing = location, detail, kind, doing
        super().__init__(store_message(location, detail, kind, doing))

    def while_doing(self, doing: str) -> StoreError:
        """The same failure, saying what was being done (kept when it says so already)."""
        if self.doing or not doing:
            return self
        return StoreError(self.location, self.detail, self.kind, doing)


def store_message(location: Location, detail: str, kind: str, doing: str) -> str:
    """One line for a failure: a damaged file is said to be so; of a failure while working
    in the database, that the runs stored so far are intact and how to go on."""
    where = f"database {location}: "
    if kind == LOST:
        return (
            f"{where}the connection to the server was lost ({detail})"
            + (f" while {doing}" if doing else "")
            + ". Runs stored so far are intact; when the server is back, re-run the same "
            "command to continue (from this machine or any other)"
        )
    said = where + detail + (f" while {doing}" if doing else "")
    if kind == DAMAGED:
        # nothing here can say what of it is still intact
        return (
            f"{said}; the file is damaged or was overwritten: use {param('db')} PATH to put the "
            "database elsewhere"
        )
    if not doing:
        return said
    elsewhere = f"{param('db')} PATH" if store_file(location) is not None else f"{param('db')} URL"
    return (
        f"{said}. Runs stored so far are intact; fix the cause, or use {elsewhere} to put the "
        "database elsewhere"
    )


class Database(Closing):
    """One connection to a store, in autocommit mode: each statement outside `transaction`
    is committed on its own. Not to be shared between threads (see `reopen`)."""

    dialect: ClassVar[str]

    def __init__(self, location: Location):
        self.location = location

    # --- statements ------------------------------------------------------------------------

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run one statement (`?` placeholders); StoreError on failure."""

    @abstractmethod
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each row of parameters."""

    @contextmanager
    def transaction(self, doing: str) -> Iterator[Database]:
        """The block's statements all applied or none; on SQLite the write lock is taken at
        the start (`BEGIN IMMEDIATE`), so that what the block reads stays true until it
        commits. Failures as StoreError saying `doing`."""
        with self.translating(doing):
            self._begin()
            try:
                yield self
            except BaseException:
                self._rollback()
                raise
            self._commit()

    @contextmanager
    def translating(self, doing: str) -> Iterator[None]:
        """The block's database failures as StoreError saying `doing` ("reading runs")."""
        try:
            yield
        except StoreError as exc:
            raise exc.while_doing(doing) from None
        except self.driver_errors() as exc:
            raise self.failure(exc).while_doing(doing) from None

    @abstractmethod
    def driver_errors(self) -> tuple[type[BaseException], ...]:
        """The driver's exception classes (what `failure` translates)."""

    @abstractmethod
    def failure(self, exc: BaseException) -> StoreError:
        """A driver's exception as StoreError."""

    @abstractmethod
    def _begin(self) -> None: ...

    @abstractmethod
    def _commit(self) -> None: ...

    @abstractmethod
    def _rollback(self) -> None: ...

    # --- the connection --------------------------------------------------------------------

    @abstractmethod
    def close(self) -> None: ...

    @property
    @abstractmethod
    def closed(self) -> bool: ...

    @abstractmethod
    def reopen(self) -> Database:
        """Another connection to the same, already migrated, database (for another thread)."""

    @abstractmethod
    def schema_version(self) -> int: ...

    # --- what differs between the stores -----------------------------------------------------

    def compact(self) -> None:
        """Give the space of deleted rows back (SQLite: VACUUM); PostgreSQL's autovacuum does
        it by itself."""
        return None

    def size(self) -> int | None:
        """Bytes the database takes on disk, where that is one file's business (None on a
        server, where deleted rows' space is reused rather than given back)."""
        return None

    def lock(self, name: str) -> None:
        """Inside `transaction`: keep other writers that take the same lock out until the
        block ends, so that what it reads stays true until it commits. SQLite's
        `BEGIN IMMEDIATE` holds the file's write lock already; PostgreSQL takes an advisory
        lock of the transaction named `name` (its READ COMMITTED would let two blocks read
        the same rows and both write)."""
        return None

    def wait_for_writers(self, milliseconds: int) -> None:
        """How long a write waits for another process's write lock before failing."""
        return None

    def hold_lease(self, run_id: str) -> bool | None:
        """Take this connection's hold on a run, which the server drops when the connection
        ends (a process killed, a machine gone): True when taken, False while another
        connection holds it; None where the store cannot hold one (SQLite: the lease's
        host, pid and heartbeat decide, see localeval.history.lease)."""
        return None

    def drop_lease(self, run_id: str) -> None:
        """Let go of the hold `hold_lease` took (nothing when there is none)."""
        return None

    def lease_held_elsewhere(self, run_id: str) -> bool | None:
        """Whether another connection holds the run (None where the store cannot tell)."""
        return None
