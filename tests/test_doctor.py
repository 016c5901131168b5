"""`localeval doctor`: one screen saying whether this install can evaluate here with no
network, exit 0 when everything holds and 1 otherwise, each failure with what to do; and
it creates nothing. Run on this install's real models (scripts/setup.sh provisions them),
the smallest judge and the embedder, and once inside a network namespace with no network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.cli import main

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
JUDGE_FILE = MODELS / "SmolLM2-135M-Instruct.Q4_1.gguf"
JUDGE_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
EMBEDDER = MODELS / "all-minilm-l6-v2"
EMBEDDER_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

pytestmark = pytest.mark.real_models


def models_toml(
    folder: Path, judge: Path = JUDGE_FILE, judge_sha: str = JUDGE_SHA256, embedder: Path = EMBEDDER
) -> Path:
    text = f"""
default_judge = "small"
default_embedder = "minilm"
[judges.small]
path = "{judge}"
sha256 = "{judge_sha}"
[embedders.minilm]
path = "{embedder}"
weights = "model.safetensors"
sha256 = "{EMBEDDER_SHA256}"
"""
    path = folder / "models.toml"
    path.write_text(text, encoding="utf-8")
    return path


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def doctor(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["doctor", *map(str, args)])
    return result.exit_code, result.output


def line(output: str, name: str) -> str:
    """The row of the check called `name` (a status, the name padded, then what it found)."""
    return next(row for row in output.splitlines() if row[4:].split("  ")[0] == name)


def test_everything_holds_and_nothing_is_created(tmp_path: Path) -> None:
    models = models_toml(tmp_path)
    before = tree(tmp_path)
    status, output = doctor("--models", models, "--db", tmp_path / "new" / "h.db")
    assert status == 0, output
    assert output.rstrip().endswith("Ready: this install can evaluate here with no network.")
    assert line(output, "llama.cpp build").startswith("ok ")
    assert "works (decoded a test prompt" in line(output, "llama.cpp build")
    assert "offline, vectors of 384 numbers" in line(output, "embedder minilm loads")
    assert "none yet (the first evaluate makes it)" in line(output, "run history")
    assert tree(tmp_path) == before  # not the history's folder, not its file


def test_a_missing_or_changed_model_fails_with_what_to_do(tmp_path: Path) -> None:
    missing = models_toml(tmp_path, judge=tmp_path / "gone.gguf")
    status, output = doctor("--models", missing)
    assert status == 1
    assert line(output, "judge small").startswith("NO ")
    assert "to do: run scripts/setup.sh" in output
    assert "no judge file to prove the build with" in line(output, "llama.cpp build")
    assert output.rstrip().endswith("checks failed.")

    changed = models_toml(tmp_path, judge_sha="0" * 64)
    status, output = doctor("--models", changed)
    assert status == 1
    assert "sha256" in line(output, "judge small")


def test_a_build_that_cannot_decode_the_file_fails(tmp_path: Path) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + bytes(4096))
    status, output = doctor("--models", models_toml(tmp_path, judge=junk, judge_sha="1" * 64))
    assert status == 1
    found = line(output, "llama.cpp build")
    assert found.startswith("NO ") and "the installed llama-cpp-python" in found
    assert "to do: run scripts/setup.sh again" in output


def test_an_embedder_that_cannot_load_offline_fails(tmp_path: Path) -> None:
    empty = tmp_path / "empty-embedder"
    empty.mkdir()
    status, output = doctor("--models", models_toml(tmp_path, embedder=empty))
    assert status == 1
    assert line(output, "embedder minilm loads").startswith("NO ")
    assert "a model of your own must be a local folder" in output


def test_a_history_folder_that_cannot_be_and_an_unreachable_server_fail(tmp_path: Path) -> None:
    models = models_toml(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    status, output = doctor("--models", models, "--db", blocker / "h.db")
    assert status == 1
    assert "is not a folder" in line(output, "run history folder")

    # a port nothing listens on: refused at once
    status, output = doctor("--models", models, "--db", "postgresql://eval@127.0.0.1:9/runs")
    assert status == 1
    assert line(output, "run history").startswith("NO ")
    assert "to do: check --db or $LOCALEVAL_DB" in output


def test_doctor_with_no_network_at_all(tmp_path: Path) -> None:
    unshare = shutil.which("unshare")
    command = [
        sys.executable,
        "-m",
        "localeval.cli",
        "doctor",
        "--models",
        str(models_toml(tmp_path)),
    ]
    for isolation in (["-n"], ["-rn"]):
        if unshare is None:
            break
        probe = subprocess.run([unshare, *isolation, "true"], capture_output=True)
        if probe.returncode == 0:
            break
    else:
        isolation = []
    if unshare is None or not isolation:
        reason = (
            "no unshare on PATH" if unshare is None else "the kernel refuses unshare -n and -rn"
        )
        print(f"skipped: {reason}")
        pytest.skip(reason)
    env = {**os.environ, "LOCALEVAL_DB": str(tmp_path / "h.db")}
    done = subprocess.run(
        [unshare, *isolation, *command], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Ready: this install can evaluate here with no network." in done.stdout
