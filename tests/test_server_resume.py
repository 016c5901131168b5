"""Nothing lost with samples in flight: a `localeval evaluate` process whose judge server
dies part-way, or that is stopped with Ctrl-C, keeps the samples it finished (in dataset
order) and, run again, ends with the results of a run never interrupted. The server is
the recorded fake (tests/server_fakes.py); tests/test_server_real.py kills a real one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from run_db import db_runs, stored_in_unfinished_run
from server_fakes import FakeServer, models_toml

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo.jsonl"


def command(out: Path) -> list[str]:
    cli = [sys.executable, "-m", "localeval.cli", "evaluate", str(DEMO), "-o", str(out)]
    return [*cli, "--no-progress", "-mfaithfulness", "-mcontext_recall"]


def environment(tmp_path: Path, url: str, db: str, **settings: Any) -> dict[str, str]:
    models = tmp_path / f"{db}.toml"
    models.write_text(models_toml(url, concurrency=3, **settings), encoding="utf-8")
    return {
        **os.environ,
        "LOCALEVAL_DB": str(tmp_path / f"{db}.db"),
        "LOCALEVAL_MODELS": str(models),
        "PYTHONPATH": str(ROOT),
    }


def comparable(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    for key in ("id", "created", "usage", "judge"):
        del data["run"][key]  # the judge's base_url: another port for each fake
    return data


def wait_for_samples(db: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while stored_in_unfinished_run(db) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no samples stored"
        time.sleep(0.02)


def reference(tmp_path: Path) -> dict[str, Any]:
    with FakeServer() as fake:
        out = tmp_path / "whole.json"
        env = environment(tmp_path, fake.url, "whole")
        done = subprocess.run(command(out), env=env, capture_output=True, text=True)
        assert done.returncode in (0, 1), done.stderr
    return comparable(out)


def test_a_run_whose_server_died_resumes_to_the_uninterrupted_results(tmp_path: Path) -> None:
    whole = reference(tmp_path)
    out = tmp_path / "resumed.json"
    with FakeServer() as fake:
        fake.delay_s = 0.03
        env = environment(tmp_path, fake.url, "killed", retries=1)
        process = subprocess.Popen(command(out), env=env, stderr=subprocess.PIPE, text=True)
        wait_for_samples(tmp_path / "killed.db", 2, process)
        port = fake.port
    # the server is gone: the judge retries once, then the run stops, keeping what it has
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 3, stderr
    assert "judge server" in stderr and "failed 2 times" in stderr
    assert "re-run the same command to continue it" in stderr
    ((stored, total, finished),) = db_runs(tmp_path / "killed.db")
    assert 2 <= stored < total and finished is None

    with FakeServer(port=port):  # the server is back
        done = subprocess.run(command(out), env=env, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert "Resuming run" in done.stderr
    assert comparable(out) == whole


@pytest.mark.parametrize(
    ("stop", "status", "said"),
    [(signal.SIGINT, 130, "Interrupted."), (signal.SIGTERM, 143, "Terminated.")],
)
def test_ctrl_c_with_samples_in_flight_stops_at_once_and_resumes(
    tmp_path: Path, stop: signal.Signals, status: int, said: str
) -> None:
    """Ctrl-C, or SIGTERM (a CI time-out), while three samples are in flight."""
    whole = reference(tmp_path)
    out = tmp_path / "resumed.json"
    with FakeServer() as fake:
        fake.delay_s = 0.2  # slow requests: Ctrl-C lands while three are in flight
        env = environment(tmp_path, fake.url, "stopped")
        process = subprocess.Popen(command(out), env=env, stderr=subprocess.PIPE, text=True)
        wait_for_samples(tmp_path / "stopped.db", 1, process)
        fake.delay_s = 30.0  # each stream's next request hangs: the stop must not wait for it
        time.sleep(1.0)
        started = time.monotonic()
        process.send_signal(stop)
        _, stderr = process.communicate(timeout=30)
        stopped_in = time.monotonic() - started
        assert process.returncode == status, stderr
        assert stopped_in < 3.0  # not after the requests in flight (30 s each)
        assert stderr.endswith(f"re-run the same command to continue it.\n{said}\n"), stderr
        fake.delay_s = 0.0
        done = subprocess.run(command(out), env=env, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert "Resuming run" in done.stderr
    assert comparable(out) == whole
