"""Nothing lost, with a real judge: a real `localeval evaluate` process is killed (kill -9)
at random moments, run again until it finishes, and must end with exactly the results of a
run never interrupted, the database intact after every kill. Uses the small smollm2-135m
judge to stay fast; its scores are deterministic, whatever the order of calls."""

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
from run_db import db_runs, stored_in_unfinished_run

pytestmark = pytest.mark.real_models

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo.jsonl"
SEED = 1889


def command(out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "localeval.cli",
        "evaluate",
        str(DEMO),
        "--judge",
        "smollm2-135m",
        *("-m", "context_precision", "-m", "faithfulness", "-m", "context_recall"),
        "--no-progress",
        "-o",
        str(out),
    ]


def run_in(db: Path, out: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "LOCALEVAL_DB": str(db)}
    return subprocess.Popen(command(out), cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)


def comparable(results: Path) -> dict[str, Any]:
    """Everything but the run's id, time and cost: a resumed process redoes the sample that
    was cut short, partly from the cache, and evaluates tokens that an uninterrupted judge
    still held from the sample before."""
    data = json.loads(results.read_text())
    for key in ("id", "created", "usage"):
        del data["run"][key]
    return data


def test_real_run_killed_at_random_points_resumes_to_the_same_results(tmp_path: Path) -> None:
    whole = tmp_path / "whole.json"
    first = run_in(tmp_path / "whole.db", whole)
    _, stderr = first.communicate(timeout=900)
    assert first.returncode in (0, 1), stderr

    db, out = tmp_path / "killed.db", tmp_path / "resumed.json"
    rng = random.Random(SEED)
    # kill points are counted in stored samples, not seconds: loading the model takes much
    # of a short run, so a kill at a random second often landed before any sample (and the
    # test then failed for want of a part-way kill); a random delay after the count lets a
    # kill also fall inside a sample's judging
    kill_after = sorted(rng.sample(range(1, 8), 3))
    part_way = []
    incomplete_left = False
    for stored_target in kill_after:
        process = run_in(db, out)
        deadline = time.monotonic() + 900
        while process.poll() is None and stored_in_unfinished_run(db) < stored_target:
            assert time.monotonic() < deadline, "the run stopped storing samples"
            time.sleep(0.05)
        if process.poll() is not None:
            break  # finished before the kill
        time.sleep(rng.uniform(0.0, 0.5))
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
        runs = db_runs(db)
        assert all(done == total for done, total, finished in runs if finished)
        part_way += [done for done, total, finished in runs if not finished and done]
        incomplete_left = any(not finished for _, _, finished in runs)
    else:
        final = run_in(db, out)
        _, stderr = final.communicate(timeout=900)
        assert final.returncode in (0, 1), stderr
        if incomplete_left:
            assert "Resuming run " in stderr, stderr
    assert comparable(out) == comparable(whole)
    assert db_runs(db)[-1][:2] == (8, 8)
    assert part_way, f"no kill landed part-way (seed {SEED}, kills after {kill_after})"
