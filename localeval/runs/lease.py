"""Who is writing a run: the lease that keeps two processes from recording into one run.

A process that starts or continues a run writes itself into the run's `owner` column (its
host, boot, pid, the pid's start time and a token of its own), and refreshes `heartbeat` with
every sample it stores. Another process may continue the run only when that owner is gone:

* on the same host, when the pid no longer runs, or now names another process (its start
  time differs: the pid was reused), or the machine was rebooted since (another boot id);
  within one process, when the store that took the lease is closed;
* on another host (a database on a shared disk, where no pid can be checked), when no sample
  was stored for STALE_AFTER_S.

The database operations are RunStore's (localeval.runs.history); this module only says
whether an owner is alive. Nothing here prints.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from dataclasses import asdict, dataclass
from pathlib import Path

#: a run owned by a process on another host is free again after this long without a stored
#: sample (a judge takes seconds a sample, minutes at worst on long contexts)
STALE_AFTER_S = 15 * 60

#: tokens of this process's stores that are open: a lease of this pid with another token
#: was left by a store that was closed without ending it
_OPEN_TOKENS: set[str] = set()


@dataclass(frozen=True)
class Owner:
    """A process that holds a run's lease."""

    host: str
    boot: str | None
    pid: int
    #: the process's start time (clock ticks since boot), where /proc tells it
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
    started = _start_time(owner.pid)
    if started is not None or Path("/proc/self/stat").exists():
        # /proc answers: the pid runs (not a zombie) and is the same process as before
        return started is not None and (owner.started is None or started == owner.started)
    return _running(owner.pid)


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """The start time of a running process from /proc (None when it does not run, is a
    zombie, or there is no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # the command name may hold spaces
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def _running(pid: int) -> bool:
    """Where there is no /proc: whether a process of that pid exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, as another user's
    return True
