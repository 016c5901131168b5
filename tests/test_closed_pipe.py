"""A reader that stops reading (`localeval evaluate ... | head -1`) is normal in a shell: the
command stops printing quietly, keeps its own exit code, and what it saves is saved whole.

The reading end of the pipe is closed before the command prints its first line, so every
line it prints meets a closed pipe: no timing decides what the test sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_kill_resume import FAKE_MODELS, write_data

CLI = [sys.executable, "-m", "localeval.cli"]


def environment(folder: Path) -> dict[str, str]:
    models = folder / "fake-models.toml"
    models.write_text(FAKE_MODELS, encoding="utf-8")
    return {
        **os.environ,
        "LOCALEVAL_DB": str(folder / "history.db"),
        "LOCALEVAL_MODELS": str(models),
    }


def run_into_closed_pipe(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Runs the command with its standard output a pipe nobody reads from."""
    process = subprocess.Popen(
        [*CLI, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # as `| head -0`: the first line printed meets a closed pipe
    errors = process.stderr.read().decode()
    return process.wait(), errors


def run_normally(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True)
    return done.returncode, done.stdout


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data.jsonl", 6)


def test_evaluate_into_a_closed_pipe_keeps_its_exit_code_and_saves_the_run(
    tmp_path: Path, data: Path
) -> None:
    env = environment(tmp_path)
    out = tmp_path / "piped.json"
    status, errors = run_into_closed_pipe(["evaluate", str(data), "-o", str(out)], env)

    whole = tmp_path / "whole.json"
    expected_status, printed = run_normally(["evaluate", str(data), "-o", str(whole)], env)
    assert printed  # the summary that met the closed pipe above
    assert status == expected_status == 1  # the fake judge's scores fail a gate
    assert "Internal error" not in errors and "BrokenPipe" not in errors, errors
    assert "Exception ignored" not in errors, errors
    piped, unpiped = json.loads(out.read_text()), json.loads(whole.read_text())
    assert piped["summary"] == unpiped["summary"]
    assert len(piped["samples"]) == 6


def test_diff_into_a_closed_pipe_writes_its_file_and_exits_as_usual(
    tmp_path: Path, data: Path
) -> None:
    env = environment(tmp_path)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    for out in (first, second):
        run_normally(["evaluate", str(data), "-o", str(out)], env)
    args = ["diff", str(first), str(second)]
    expected_status, printed = run_normally(args, env)
    assert printed

    diff_file = tmp_path / "diff.json"
    status, errors = run_into_closed_pipe([*args, "-o", str(diff_file)], env)
    assert status == expected_status
    assert "Internal error" not in errors and "Exception ignored" not in errors, errors
    assert json.loads(diff_file.read_text())  # written whole
