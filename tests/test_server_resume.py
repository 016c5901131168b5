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
from collections.abc import Callable
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


#: how long a request the fake holds hangs: far longer than any stop may take under load
HANG_S = 300.0


def asks_after(count: int) -> Callable[[dict[str, Any]], bool]:
    """Whether a completion asks about a demo sample after the first `count` (its
    question or answer, each the demo's only, is in the prompt; contexts are shared)."""
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]
    texts = [text for row in rows[count:] for text in (row["question"], row["answer"])]
    return lambda body: any(text in body["prompt"] for text in texts)


def wait_until(ready: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    """Until `ready()`, while the process runs (the deadline only bounds a failure)."""
    deadline = time.monotonic() + 600
    while not ready():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "never ready"
        time.sleep(0.02)


def wait_for_samples(db: Path, count: int, process: subprocess.Popen[str]) -> None:
    wait_until(lambda: stored_in_unfinished_run(db) >= count, process)


def reference(tmp_path: Path) -> dict[str, Any]:
    """The results of a run never interrupted."""
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
        # the judge's requests for the samples after the third hang: each of the three
        # streams holds one in flight, and the stop must not wait for them
        fake.holds, fake.hang_s = asks_after(3), HANG_S
        env = environment(tmp_path, fake.url, "stopped")
        process = subprocess.Popen(command(out), env=env, stderr=subprocess.PIPE, text=True)
        # the signal once the three hang and the three samples before are stored
        db = tmp_path / "stopped.db"
        wait_until(lambda: fake.held == 3 and stored_in_unfinished_run(db) == 3, process)
        process.send_signal(stop)
        _, stderr = process.communicate(timeout=HANG_S / 2)
        assert process.returncode == status, stderr
        # it stopped while the three were still in flight at the server, not after them
        assert fake.held == 3
        assert stderr.endswith(
            f"saved with 3 of 8 samples scored; re-run the same command to continue it.\n{said}\n"
        ), stderr
        fake.holds = None
        done = subprocess.run(command(out), env=env, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert "Resuming run" in done.stderr
    assert comparable(out) == whole
