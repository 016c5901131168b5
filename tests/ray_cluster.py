"""A real Ray cluster for the tests marked `ray`: one head on this machine, started once per
test session (`ray start --head --block`, addressed at 127.0.0.1 on a free port, a fixed
count of 4 CPUs whatever the machine has, its files in a folder of its own) and stopped
after. Ray binds its services to the machine's address, not the loopback one; token
authentication is on, as Ray's own default for local clusters, with a token of the
session's that the drivers the tests start are given.

Also what the tests look for in its processes: the scoring actors, by the title Ray gives
their processes and the session's token in their environment."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the CPUs the head says it has: actors of one thread each, up to 4 (a sleeping fake judge
#: needs no CPU, so this is more than the machine may have)
CPUS = 4
#: the title of an actor's process while it scores a sample (and its prefix otherwise)
SCORING = "ray::SampleScorer.score"
ACTOR = "ray::SampleScorer"


@dataclass(frozen=True)
class RayCluster:
    """The running cluster: its address, and the environment a driver needs to join it."""

    address: str
    env: dict[str, str]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def ray_head(cpus: int = CPUS) -> Iterator[RayCluster]:
    """Start the head, wait until it answers, yield it; stop it (and every process it
    started) after."""
    ray = Path(sys.executable).with_name("ray")
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths
    # this process joins the cluster too (tests that drive it in-process): Ray reads these
    # once, when it is first imported, so they are set before and kept for the session
    token = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    saved = {name: os.environ.get(name) for name in token}
    os.environ.update(token)
    env = {
        **os.environ,
        # the actors import this checkout's localeval, as the drivers do
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = [
        str(ray),
        "start",
        "--head",
        "--block",
        f"--port={port}",
        "--node-ip-address=127.0.0.1",
        f"--num-cpus={cpus}",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={folder}",
    ]
    log = (folder / "head.log").open("w")
    head = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    address = f"127.0.0.1:{port}"
    try:
        _wait_until_healthy(ray, address, env, head, folder)
        yield RayCluster(address, env)
    finally:
        head.terminate()  # the head drains and stops what it started
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _wait_until_healthy(
    ray: Path, address: str, env: dict[str, str], head: subprocess.Popen[bytes], folder: Path
) -> None:
    host, port = address.split(":")
    deadline = time.monotonic() + 120
    while True:
        assert head.poll() is None, (folder / "head.log").read_text()
        assert time.monotonic() < deadline, "the Ray head did not start"
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
        except OSError:
            time.sleep(0.25)
            continue
        checked = subprocess.run(
            [str(ray), "health-check", "--address", address], env=env, capture_output=True
        )
        if checked.returncode == 0:
            return
        time.sleep(0.5)


def actor_processes(prefix: str = ACTOR) -> list[int]:
    """The processes of this session's scoring actors now (by their title), oldest first:
    those of this session's cluster alone (its token in their environment), never another
    test session's on the same machine."""
    token = os.environ.get("RAY_AUTH_TOKEN", "")
    ours = f"RAY_AUTH_TOKEN={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().decode(errors="replace")
            if not title.startswith(prefix):
                continue
            if token and ours not in (entry / "environ").read_bytes().split(b"\0"):
                continue
        except OSError:
            continue
        found.append(int(entry.name))
    return sorted(found)
