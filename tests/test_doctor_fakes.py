"""`localeval doctor` with the fake backends, so that it runs where no model is provisioned:
all holding, and each check about this machine (folders, store, models.toml) failing for
real, with its exit status and what to do. The real models' cases: tests/test_doctor.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from localeval.cli import main

ROOT = Path(__file__).resolve().parent.parent
FAKES = '[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n'
#: a server's URL holding a password, on a port nothing listens on
WITH_PASSWORD = "postgresql://evals:s3cret-word@127.0.0.1:9/runs"


def doctor(folder: Path, *args: str, models: str = FAKES) -> Result:
    path = folder / "models.toml"
    path.write_text(models, encoding="utf-8")
    return CliRunner().invoke(main, ["doctor", "--models", str(path), *args])


def row(result: Result, name: str) -> str:
    """The row of the check called `name`."""
    return next(r for r in result.output.splitlines() if r[4:].split("  ")[0] == name)


def test_all_hold_with_the_fake_models_and_nothing_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    db = tmp_path / "history" / "h.db"
    result = doctor(tmp_path, "--db", str(db))
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("with no network.")
    for name in ("judge j", "embedder e", "embedder e loads", "cache folder", "run history"):
        assert row(result, name).startswith("ok "), result.output
    # no judge of this models.toml runs on llama.cpp: its build is not asked for
    assert "no judge of models.toml runs on llama.cpp" in row(result, "llama.cpp build")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models.toml"]


def test_a_models_file_that_is_not_there_fails(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["doctor", "--models", str(tmp_path / "none.toml")])
    assert result.exit_code == 1, result.output
    assert row(result, "models.toml").startswith("NO ")
    assert "models file not found" in row(result, "models.toml")
    assert "to do: fix or name another with --models" in result.output


def _read_only(folder: Path) -> tuple[list[str], str]:
    """A command prefix under which `folder` cannot be written: its mode for a user; for
    root, who writes whatever the mode says, a read-only bind mount of it in a mount
    namespace of the command's own. Else why neither can be had here."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return [], ""
    unshare = shutil.which("unshare")
    if unshare is None:
        return [], "root, and no unshare for a read-only mount"
    mount = f"mount --bind '{folder}' '{folder}' && mount -o remount,bind,ro '{folder}'"
    probe = subprocess.run([unshare, "-m", "sh", "-c", mount], capture_output=True, text=True)
    if probe.returncode != 0:
        return [], f"root, and no read-only mount here: {probe.stderr.strip()}"
    return [unshare, "-m", "sh", "-c", f'{mount} && exec "$@"', "sh"], ""


@pytest.mark.parametrize("which", ["cache folder", "run history folder"])
def test_a_folder_that_cannot_be_written_fails(tmp_path: Path, which: str) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    prefix, why = _read_only(locked)
    if why:
        print(f"skipped: {why}")
        pytest.skip(why)
    (tmp_path / "models.toml").write_text(FAKES, encoding="utf-8")
    cache = locked if which == "cache folder" else tmp_path / "cache"
    db = locked / "h.db" if which == "run history folder" else tmp_path / "h.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache)}
    command = [sys.executable, "-m", "localeval", "doctor", "--models", "models.toml"]
    done = subprocess.run(
        [*prefix, *command, "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    found = next(r for r in done.stdout.splitlines() if r[4:].split("  ")[0] == which)
    assert found.startswith("NO ") and f"{locked} cannot be written" in found
    assert "to do: fix its rights" in done.stdout
    assert "1 of" in done.stdout  # the other folder, the store and the models all hold
    assert list(locked.iterdir()) == []


def test_an_unreachable_store_fails_without_printing_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCALEVAL_DB", WITH_PASSWORD)
    result = doctor(tmp_path)
    assert result.exit_code == 1, result.output
    assert row(result, "run history").startswith("NO ")
    assert "127.0.0.1" in row(result, "run history")
    assert "s3cret-word" not in result.output
    assert "run history folder" not in result.output  # a server's store has no folder here


def test_a_password_on_the_command_line_is_a_usage_error(tmp_path: Path) -> None:
    result = doctor(tmp_path, "--db", WITH_PASSWORD)
    assert result.exit_code == 2, result.output
    assert "s3cret-word" not in result.output
    assert "PGPASSWORD" in result.output
