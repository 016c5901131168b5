"""Runs of the demo made with the stand-in judge (the hash judge) and the fake embedder, for
the review page's tests: no model is loaded, and the judge gives every kind of verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from fakes import FakeEmbedder, HashJudge
from standins import StandIns

from localeval.cli import main

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"


def run_cli(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def demo_copy(folder: Path) -> Path:
    data = folder / "demo.jsonl"
    shutil.copy(DEMO, data)
    return data


def evaluate(stand_ins: StandIns, data: Path, *args: Any, judge: Any = None) -> str:
    """Evaluate `data` with the hash judge (or `judge`); the run's id."""
    stand_ins.use(judge or HashJudge(), FakeEmbedder())
    result = run_cli("evaluate", data, "--no-progress", *args)
    assert result.exit_code in (0, 1), result.output
    return result.output.rsplit("Run ", 1)[1].split()[0]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
