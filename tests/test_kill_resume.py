"""Nothing lost: a real `localeval evaluate` process killed at random moments (kill -9 and
Ctrl-C), then run again, ends with the results of a run never interrupted, and the
database is intact after every kill. The models are instant deterministic fakes here
(models.toml naming the "fake" backend); tests/test_resume_real.py does the same with a
real judge. On an SQLite file and on a PostgreSQL database."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from run_db import as_setting, db_runs, stored_in_unfinished_run

from localeval.database import Location

SEED = 20240607
#: the fake judge and embedder; each judge call slowed down so that a kill lands mid-run
FAKE_MODELS = '[judges.j]\nbackend = "fake"\ndelay_s = 0.002\n[embedders.e]\nbackend = "fake"\n'


def write_data(path: Path, n: int) -> Path:
    rows = [
        {
            "sample_id": f"s{i}",
            "category": ["a", "b", "c"][i % 3],
            "question": f"What is the colour of box {i}?",
            "contexts": [f"Box {i} is green.", f"Box {i} stands in room {i % 7}."],
            "answer": f"Box {i} is green. It is in room {i % 7}.",
            "reference_answer": f"Green; room {i % 7}.",
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def command(data: Path, out: Path) -> list[str]:
    cli = [sys.executable, "-m", "localeval.cli"]
    return [*cli, "evaluate", str(data), "-o", str(out), "--no-progress"]


def environment(db: Location, folder: Path) -> dict[str, str]:
    models = folder / "fake-models.toml"
    models.write_text(FAKE_MODELS, encoding="utf-8")
    return {**os.environ, "LOCALEVAL_DB": as_setting(db), "LOCALEVAL_MODELS": str(models)}


def comparable(results: Path) -> dict[str, Any]:
    data = json.loads(results.read_text())
    for key in ("id", "created"):
        del data["run"][key]
    del data["run"]["usage"]["seconds"]
    return data


@pytest.mark.both_stores
def test_killed_runs_resume_to_the_uninterrupted_results(
    tmp_path: Path, db: Location, another_database: Location
) -> None:
    data = write_data(tmp_path / "data.jsonl", 60)
    whole = tmp_path / "whole.json"
    done = subprocess.run(command(data, whole), env=environment(another_database, tmp_path))
    assert done.returncode == 1  # the fake judge's scores fail some gates

    out = tmp_path / "resumed.json"
    rng = random.Random(SEED)
    # kills are placed by stored samples (a drawn count, then a drawn fraction of a second),
    # not by a drawn time: start-up takes much of a short run, and a kill before the first
    # sample would test restarting, not resuming
    kill_after = sorted(rng.sample(range(1, 60), 5))
    part_way = 0  # kills that left a run with some but not all samples stored
    for attempt, stored_target in enumerate(kill_after):
        process = subprocess.Popen(
            command(data, out), env=environment(db, tmp_path), stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 120
        while process.poll() is None and stored_in_unfinished_run(db) < stored_target:
            assert time.monotonic() < deadline, "the run stopped storing samples"
            time.sleep(0.01)
        if process.poll() is not None:
            break  # it finished before the kill: nothing left to resume
        time.sleep(rng.uniform(0.0, 0.05))
        # the first time Ctrl-C, which says how to go on; then kill -9
        process.send_signal(signal.SIGINT if attempt == 0 else signal.SIGKILL)
        _, stderr = process.communicate(timeout=60)
        # a kill after a run completed but before the process ended leaves that run
        # complete, and the next command starts a new one; at most one is incomplete
        runs = db_runs(db)
        assert all(stored == total for stored, total, finished in runs if finished)
        incomplete = [stored for stored, total, finished in runs if not finished]
        assert len(incomplete) <= 1
        part_way += any(0 < stored < 60 for stored in incomplete)
        if attempt == 0 and process.returncode == 130 and incomplete:
            assert stderr.endswith("re-run the same command to continue it.\nInterrupted.\n")
    else:
        final = subprocess.run(command(data, out), env=environment(db, tmp_path))
        assert final.returncode == 1
    assert comparable(out) == comparable(whole)
    assert all(finished is not None for _, _, finished in db_runs(db))
    assert db_runs(db)[-1][:2] == (60, 60)
    # the kills landed part-way at least once, so this tested resuming, not restarting
    assert part_way, SEED
