"""When a run's lease is stale (localeval.history.lease): the rules that let a run whose writer
died be continued, while a live writer's run is never joined (the processes themselves:
tests/test_processes.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localeval.history.lease import (
    STALE_AFTER_S,
    Owner,
    _boot_id,
    _start_time,
    alive,
    close_owner,
    open_owner,
)


def other_process(pid: int, started: str | None, boot: str | None = None) -> Owner:
    return Owner(socket.gethostname(), boot or _boot_id(), pid, started, "t0")


def test_a_live_process_on_this_host_holds_its_lease() -> None:
    parent = os.getppid()
    assert alive(other_process(parent, _start_time(parent)), None, time.time())


def test_a_dead_process_holds_no_lease() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not alive(other_process(gone.pid, "1"), time.time(), time.time())


def test_a_reused_pid_holds_no_lease() -> None:
    """The pid runs, but it is another process: its start time differs."""
    parent = os.getppid()
    started = _start_time(parent)
    assert started is not None
    assert not alive(other_process(parent, str(int(started) + 1)), time.time(), time.time())


def test_a_lease_from_before_a_reboot_is_stale() -> None:
    parent = os.getppid()
    owner = other_process(parent, _start_time(parent), boot="another-boot")
    assert _boot_id() is not None  # this machine tells its boot id
    assert not alive(owner, time.time(), time.time())


def test_another_host_holds_its_lease_while_samples_keep_coming() -> None:
    owner = Owner("another-host", None, 1, None, "t0")
    now = time.time()
    assert alive(owner, now - 60, now)
    assert not alive(owner, now - STALE_AFTER_S - 1, now)
    assert not alive(owner, None, now)


def test_this_process_holds_a_lease_while_its_store_is_open() -> None:
    owner = open_owner()
    assert alive(owner, None, time.time())
    close_owner(owner)
    assert not alive(owner, None, time.time())


@pytest.fixture
def no_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as macOS shows it to Python: no /proc to read."""
    read_text, exists = Path.read_text, Path.exists

    def read(path: Path, *args: object, **kwargs: object) -> str:
        if str(path).startswith("/proc"):
            raise FileNotFoundError(path)
        return read_text(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", read)
    monkeypatch.setattr(Path, "exists", lambda p: not str(p).startswith("/proc") and exists(p))


@pytest.mark.usefixtures("no_proc")
def test_without_proc_a_reused_pid_is_not_taken_for_the_writer() -> None:
    """The writer's pid now runs another process (its start time differs): the run is free,
    while the process that did start then still holds it."""
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = _start_time(writer.pid)
        assert started is not None
        assert alive(other_process(writer.pid, started), None, time.time())
        reused = other_process(writer.pid, str(int(started) - 1500))
        assert not alive(reused, time.time(), time.time())
    finally:
        writer.kill()
        writer.wait()
    assert not alive(other_process(writer.pid, started), time.time(), time.time())
