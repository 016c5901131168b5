"""The examples of extending localeval, installed and run as docs/architecture.md's recipes
say: the lines of its ```sh block under "Adding a metric", "Adding a judge or embedder
backend" and "Adding a command" run in a folder of their own, `pip` and `localeval` those
of this environment (this worktree's localeval), nothing fetched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
#: `pip` and `localeval` as the recipe's lines call them: this interpreter's, offline, with
#: this checkout's localeval after whatever PYTHONPATH the line gives
PRELUDE = """
pip() { "$PY" -m pip --no-input "$@" --no-index --quiet; }
localeval() { PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$ROOT" "$PY" -m localeval "$@"; }
"""


def recipe(heading: str) -> str:
    """The ```sh block of architecture.md's section `## heading`."""
    section = ARCHITECTURE.split(f"\n## {heading}\n")[1].split("\n## ")[0]
    return section.split("```sh\n")[1].split("```")[0]


def run_recipe(heading: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """The recipe's lines in `folder`, which holds a copy of the examples (pip builds in
    the source folder, which must not be the repository's)."""
    unused = shutil.ignore_patterns("*.ipynb", "build", "*.egg-info")
    shutil.copytree(ROOT / "examples", folder / "examples", ignore=unused)
    env = {**os.environ, "PY": sys.executable, "ROOT": str(ROOT)}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        ["bash", "-c", PRELUDE + recipe(heading)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_pip_installed_backend_is_named_in_models_toml(tmp_path: Path) -> None:
    done = run_recipe("Adding a judge or embedder backend", tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: a gate failed, as it may
    # `localeval models` lists both, usable
    assert "overlap" in done.stdout and "word overlap, no model" in done.stdout
    assert "hashed" in done.stdout and "word hashing, no model" in done.stdout
    run = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["run"]
    assert run["judge"]["name"] == "overlap" and run["judge"]["settings"] == {"floor": 0.1}
    assert run["embedder"]["name"] == "hashed"
    summary = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["summary"]
    assert summary["faithfulness"]["n"] > 0 and summary["context_precision"]["n"] > 0


def test_a_pip_installed_metric_is_named_with_m(tmp_path: Path) -> None:
    done = run_recipe("Adding a metric", tmp_path)
    assert done.returncode in (0, 1), done.stderr
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert list(results["summary"]) == ["policy_ids"]
    assert all(set(sample["scores"]) == {"policy_ids"} for sample in results["samples"])


def test_a_pip_installed_command_is_a_command(tmp_path: Path) -> None:
    done = run_recipe("Adding a command", tmp_path)
    assert done.returncode == 0, done.stderr
    demo = (ROOT / "examples" / "demo.jsonl").read_text(encoding="utf-8").splitlines()
    assert done.stdout.splitlines()[-1] == f"total\t{len([line for line in demo if line])}"


@pytest.mark.parametrize(
    "heading", ["Adding a metric", "Adding a judge or embedder backend", "Adding a command"]
)
def test_each_recipe_installs_an_example_of_the_repository(heading: str) -> None:
    first = recipe(heading).splitlines()[0]
    assert first.startswith("pip install") and (ROOT / first.split()[-1]).is_dir()
