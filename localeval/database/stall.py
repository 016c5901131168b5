"""A limit on how long one statement to a PostgreSQL server may take, kept on both sides.

The server ends a statement that runs past the limit (`statement_timeout`), which leaves the
connection usable. A server that does not answer at all (its backend process stopped, its
machine frozen while the network still acknowledges) cannot end anything: then this side
gives up `CLIENT_GRACE_S` later, by shutting the connection's socket, and the statement
fails as a lost connection, which a re-run resumes from. One daemon thread watches every
connection's statement in flight, so that a statement costs no thread of its own.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from localeval.errors import UsageError

#: the environment variable that sets the limit, in seconds (0: none)
TIMEOUT_ENV = "LOCALEVAL_DB_TIMEOUT"
#: the limit when it is not set: every statement localeval sends is small (a sample's rows,
#: a lease, a page of a copy); a long `runs prune` or `cache clear` on a huge database may
#: need more
DEFAULT_TIMEOUT_S = 60.0
#: how much longer than the server's own limit this side waits before giving up on it
CLIENT_GRACE_S = 5.0


def statement_limit() -> float:
    """The limit in seconds ($LOCALEVAL_DB_TIMEOUT, else DEFAULT_TIMEOUT_S); 0 for none."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < 10**6:
        raise UsageError(
            f"${TIMEOUT_ENV} must be a number of seconds (0 for no limit), not {text!r}"
        )
    return seconds


class _Watch:
    """Statements in flight, by the socket they wait on, with when each must be done. The
    thread is woken only when a statement is due before the thread's next look (a wake-up
    per statement cost more than the statement: 0.2 to 0.3 ms against 0.3)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Empty, without a thread (also in a forked child, which has none of its parent's
        threads)."""
        self._due: dict[int, float] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        #: when the thread looks next (inf: when woken)
        self._next_look = float("inf")

    def start(self, fd: int, limit: float) -> None:
        due = time.monotonic() + limit
        with self._changed:
            self._due[fd] = due
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="db-stall", daemon=True)
                self._thread.start()
            if due < self._next_look:
                self._changed.notify()

    def end(self, fd: int) -> bool:
        """Stop watching; whether the statement was given up on."""
        with self._changed:
            return self._due.pop(fd, None) == float("inf")

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                for fd, due in self._due.items():
                    if due <= now:
                        _shut(fd)
                        self._due[fd] = float("inf")  # given up on: said by `end`
                self._next_look = min(self._due.values(), default=float("inf"))
                wait = self._next_look - now
                self._changed.wait(None if wait == float("inf") else wait)


def _shut(fd: int) -> None:
    """End the connection under libpq's feet: its wait for an answer returns at once."""
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # closed meanwhile: nothing is waiting on it


_WATCH = _Watch()
os.register_at_fork(after_in_child=_WATCH.reset)


class Stalled(Exception):
    """The server gave no answer within the limit (and CLIENT_GRACE_S)."""


@contextmanager
def answered_within(fd: int, limit: float) -> Iterator[None]:
    """Run a statement on the connection whose socket is `fd`; Stalled (from the driver's
    own error) when the server gave no answer within `limit` + CLIENT_GRACE_S seconds."""
    if limit <= 0 or fd < 0:
        yield
        return
    _WATCH.start(fd, limit + CLIENT_GRACE_S)
    try:
        yield
    except Exception as exc:
        if _WATCH.end(fd):
            raise Stalled(f"the server gave no answer in {limit:g} s") from exc
        raise
    finally:  # also on Ctrl-C: a socket number left watched could be another's later
        _WATCH.end(fd)
