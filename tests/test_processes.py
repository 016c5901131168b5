"""Several real `localeval evaluate` processes at once on one database, and a process
stopped by SIGTERM: runs are never merged, a fresh database is migrated once, and a
time-out in CI says how to go on as Ctrl-C does. The models are the instant fakes of
models.toml's "fake" backend, slowed down where a process must still be running. Each on an
SQLite file and on a PostgreSQL database."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from run_db import as_setting, db_runs, query, stored_in_unfinished_run

from localeval.database import Location

pytestmark = pytest.mark.both_stores

ROOT = Path(__file__).resolve().parent.parent


def write_data(path: Path, n: int) -> Path:
    rows = [
        {
            "sample_id": f"s{i}",
            "question": f"What colour is box {i}?",
            "contexts": [f"Box {i} is green."],
            "answer": f"Box {i} is green.",
            "reference_answer": "Green.",
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def environment(tmp_path: Path, db: Location, delay: float = 0.0) -> dict[str, str]:
    models = tmp_path / f"fake-{delay}.toml"
    models.write_text(
        f'[judges.j]\nbackend = "fake"\ndelay_s = {delay}\n[embedders.e]\nbackend = "fake"\n',
        encoding="utf-8",
    )
    return {
        **os.environ,
        "LOCALEVAL_DB": as_setting(db),
        "LOCALEVAL_MODELS": str(models),
        "PYTHONPATH": str(ROOT),
    }


def localeval(*args: Any) -> list[str]:
    return [sys.executable, "-m", "localeval.cli", *(str(a) for a in args)]


def wait_for_samples(db: Location, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while stored_in_unfinished_run(db) < count:
        assert process.poll() is None, "the first process ended before the second started"
        assert time.monotonic() < deadline, "the run stopped storing samples"
        time.sleep(0.02)


def test_a_run_being_written_is_never_joined_by_a_second_process(
    tmp_path: Path, db: Location
) -> None:
    data = write_data(tmp_path / "big.jsonl", 40)
    # slow enough that the first run outlasts the second's start on a loaded machine
    env = environment(tmp_path, db, delay=0.05)
    first_out, second_out = tmp_path / "first.json", tmp_path / "second.json"
    first = subprocess.Popen(
        localeval("evaluate", data, "--no-progress", "-o", first_out),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_samples(db, 3, first)
    # the same evaluation with another gate: before, it resumed the first one's run
    second = subprocess.run(
        localeval(
            "evaluate", data, "--no-progress", "-o", second_out, "--threshold", "faithfulness=0.99"
        ),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    first.communicate(timeout=300)
    assert "Resuming" not in second.stderr
    first_id = json.loads(first_out.read_text())["run"]["id"]
    second_id = json.loads(second_out.read_text())["run"]["id"]
    assert first_id != second_id
    note = re.search(
        rf"Note: run {first_id} is being written by process {first.pid} on \S+ now, last sample "
        r"stored \d+ s ago, so this process does not join it: it starts a run of its own\.\n",
        second.stderr,
    )
    assert note, second.stderr
    # two complete runs, each with all its samples and its own gates
    assert [row[:3] for row in db_runs(db)] == [(40, 40, row[2]) for row in db_runs(db)]
    assert all(finished for _, _, finished in db_runs(db))
    for out, run_id in ((first_out, first_id), (second_out, second_id)):
        gates = json.loads(out.read_text())["gates"]
        ((stored,),) = query(db, "SELECT gates FROM runs WHERE id = ?", (run_id,))
        assert json.loads(stored) == gates
    second_gates = json.loads(second_out.read_text())["gates"]
    assert {g["metric"]: g["threshold"] for g in second_gates}["faithfulness"] == 0.99
    assert {g["metric"]: g["threshold"] for g in json.loads(first_out.read_text())["gates"]}[
        "faithfulness"
    ] == 0.8


def test_resuming_a_run_a_live_process_writes_is_refused(tmp_path: Path, db: Location) -> None:
    data = write_data(tmp_path / "big.jsonl", 40)
    # slow enough that the first run outlasts the second's start on a loaded machine
    env = environment(tmp_path, db, delay=0.05)
    first = subprocess.Popen(
        localeval("evaluate", data, "--no-progress"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        wait_for_samples(db, 2, first)
        ((run_id,),) = query(db, "SELECT id FROM runs WHERE finished IS NULL")
        second = subprocess.run(
            localeval("evaluate", data, "--no-progress", "--resume", run_id),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        first.terminate()  # kept resumable, as on Ctrl-C: nothing to wait for
        first.wait(timeout=300)
    assert second.returncode == 2
    assert re.fullmatch(
        rf"Loaded 40 samples from {re.escape(str(data))}; metrics: [a-z_, ]+\n"
        rf"Error: run {run_id} is being written by process {first.pid} on \S+ now, last sample "
        r"stored \d+ s ago; wait for it to finish, or start a new run with --no-resume\n",
        second.stderr,
    ), second.stderr


def test_a_killed_owner_leaves_a_run_the_next_command_continues(
    tmp_path: Path, db: Location
) -> None:
    data = write_data(tmp_path / "big.jsonl", 40)
    env = environment(tmp_path, db, delay=0.01)
    first = subprocess.Popen(
        localeval("evaluate", data, "--no-progress"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_samples(db, 3, first)
    first.kill()  # no chance to give the lease back
    first.wait()
    again = subprocess.run(
        localeval("evaluate", data, "--no-progress"),
        env=environment(tmp_path, db),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode in (0, 1), again.stderr
    assert "Resuming run " in again.stderr
    assert [row[:2] for row in db_runs(db)] == [(40, 40)]


def test_processes_opening_a_new_database_at_once_all_succeed(
    tmp_path: Path, new_database: Callable[[], Location]
) -> None:
    """Before, 5 of 12 such processes failed ('table judge_cache already exists')."""
    data = write_data(tmp_path / "d.jsonl", 3)
    failures = []
    for _ in range(3):
        db = new_database()
        env = environment(tmp_path, db)
        args = [
            "evaluate",
            str(data),
            "-m",
            "bleu",
            "--no-resume",
            "--no-progress",
            "--db",
            as_setting(db),
        ]
        # each process imports localeval first, then waits for the same moment to open the
        # database, so that they race where the migrations are
        racer = (
            "import time; from localeval.cli import main; "
            f"time.sleep(max(0.0, {time.time() + 4} - time.time())); main()"
        )
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", racer, *args],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        for process in processes:
            _, stderr = process.communicate(timeout=120)
            if process.returncode != 0:
                failures.append(stderr)
        # what the failing processes said first: it names the race, where a count would not
        assert not failures, failures
        assert len(db_runs(db)) == 4


def test_sigterm_keeps_the_run_and_says_how_to_continue(tmp_path: Path, db: Location) -> None:
    data = write_data(tmp_path / "big.jsonl", 40)
    env = environment(tmp_path, db, delay=0.01)
    process = subprocess.Popen(
        localeval("evaluate", data, "--no-progress"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_samples(db, 3, process)
    process.send_signal(signal.SIGTERM)  # what a CI time-out sends
    _, stderr = process.communicate(timeout=60)
    ((stored, total, finished),) = db_runs(db)
    assert finished is None and 0 < stored < total
    ((run_id,),) = query(db, "SELECT id FROM runs")
    assert process.returncode == 143
    assert stderr.endswith(
        f"Run {run_id} is saved with {stored} of 40 samples scored; re-run the same command to "
        "continue it.\nTerminated.\n"
    ), stderr
    again = subprocess.run(
        localeval("evaluate", data, "--no-progress"),
        env=environment(tmp_path, db),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert f"Resuming run {run_id}: {stored} of 40 samples were scored" in again.stderr
