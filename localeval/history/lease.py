"""Who is writing a run: the lease that keeps two processes from recording into one run.

A process that starts or continues a run writes itself into the run's `owner` column (its
host, boot, pid, the pid's start time and a token of its own), and refreshes `heartbeat` with
every sample it stores. Another process may continue the run only when that owner is gone:

* on the same host, when the pid no longer runs, or now names another process (its start
  time differs: the pid was reused), or the machine was rebooted since (another boot id,
  where Linux tells it); the pid's start time comes from psutil, so the check holds on
  macOS and Windows as on Linux;
  within one process, when the store that took the lease is closed;
* on another host (an SQLite file on a shared disk, where no pid can be checked), when no
  sample was stored for STALE_AFTER_S.

On a PostgreSQL server the owner also holds the run on its connection (an advisory lock,
`Database.hold_lease`), which the server lets go of when that connection ends: there the
server says whether the owner is alive, on every machine at once, and no heartbeat's age
is waited for (`take_lease`, `held_by_other`).

The database operations are RunStore's (localeval.history.store); this module only says
whether an owner is alive. Nothing here prints.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from localeval.database import Database

#: a run owned by a process on another host is free again after this long without a stored
#: sample (a judge takes seconds a sample, minutes at worst on long contexts)
STALE_AFTER_S = 15 * 60

#: how long a run whose owner is known to be gone may still be held on the server: the
#: moment the server takes to end the connection of a process that just died or closed it
GONE_GRACE_S = 5.0

#: tokens of this process's stores that are open: a lease of this pid with another token
#: was left by a store that was closed without ending it
_OPEN_TOKENS: set[str] = set()


@dataclass(frozen=True)
class Owner:
    """A process that holds a run's lease."""

    host: str
    boot: str | None
    pid: int
    #: the process's start time (milliseconds since the epoch, as psutil tells it; None
    #: where it cannot be read)
    started: str | None
    token: str

    def text(self) -> str:
        """How the database stores it (compared as text: it is written once per store)."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def parse(cls, text: str | None) -> Owner | None:
        if not text:
            return None
        try:
            return cls(**json.loads(text))
        except (TypeError, ValueError):
            return None  # not ours to understand: treated as no owner

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}"


def open_owner() -> Owner:
    """This process, with a fresh token, for a store being opened (see close_owner)."""
    pid = os.getpid()
    owner = Owner(socket.gethostname(), _boot_id(), pid, _start_time(pid), secrets.token_hex(8))
    _OPEN_TOKENS.add(owner.token)
    return owner


def close_owner(owner: Owner) -> None:
    """The store of this owner is closed: any lease it left is stale."""
    _OPEN_TOKENS.discard(owner.token)


def alive(owner: Owner, heartbeat: float | None, now: float) -> bool:
    """Whether the owner of a lease may still be writing its run."""
    if owner.host != socket.gethostname():
        return heartbeat is not None and now - heartbeat < STALE_AFTER_S
    boot = _boot_id()
    if owner.boot is not None and boot is not None and owner.boot != boot:
        return False  # rebooted since: every process of that boot is gone
    if owner.pid == os.getpid():
        return owner.token in _OPEN_TOKENS
    return _same_process(owner.pid, owner.started)


@dataclass(frozen=True)
class RunLease:
    """What a run's row says of who writes it: its owner and last heartbeat."""

    run_id: str
    owner: Owner | None
    heartbeat: float | None


def held_by_other(db: Database, lease: RunLease, mine: Owner, now: float) -> bool:
    """Whether a live process other than `mine` holds the run: the server says so where it
    holds leases, else the owner's host, pid and heartbeat do."""
    owner, heartbeat = lease.owner, lease.heartbeat
    if owner is None or owner.token == mine.token:
        return False
    elsewhere = db.lease_held_elsewhere(lease.run_id)
    if elsewhere is None:
        return alive(owner, heartbeat, now)
    if elsewhere and _known_gone(owner, heartbeat, mine, now):
        return not _within_grace(lambda: not db.lease_held_elsewhere(lease.run_id))
    return elsewhere


def take_lease(db: Database, lease: RunLease, mine: Owner, now: float) -> bool:
    """Take the run's lease for `mine` where the server holds leases: False while a live
    process holds it (its current owner and heartbeat). The caller writes itself as the
    owner after; `db.drop_lease` gives it up."""
    owner, heartbeat = lease.owner, lease.heartbeat
    held = db.hold_lease(lease.run_id)
    if held is None:
        other = owner is not None and owner.token != mine.token
        return not (other and owner is not None and alive(owner, heartbeat, now))
    if not held and _known_gone(owner, heartbeat, mine, now):
        return _within_grace(lambda: bool(db.hold_lease(lease.run_id)))
    return held


def _known_gone(owner: Owner | None, heartbeat: float | None, mine: Owner, now: float) -> bool:
    """An owner this host can tell is gone (its pid ended, its store closed), whose
    connection the server may not have ended yet."""
    return owner is not None and owner.host == mine.host and not alive(owner, heartbeat, now)


def _within_grace(free: Callable[[], bool]) -> bool:
    """Whether `free()` comes true within GONE_GRACE_S."""
    deadline = time.monotonic() + GONE_GRACE_S
    while not free():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """The start time of a running process, in milliseconds since the epoch, as text (None
    when it does not run, is a zombie, or its start time is hidden from this user)."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return _started(process)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _started(process: psutil.Process) -> str:
    # whole milliseconds: the same process reads the same text every time it is asked
    return str(round(process.create_time() * 1000))


def _same_process(pid: int, started: str | None) -> bool:
    """Whether `pid` runs (not a zombie) and is the process that started at `started`
    (any process of that pid, when the start time was not known)."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return started is None or _started(process) == started
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # it runs, as another user's whose start time this user may not read
