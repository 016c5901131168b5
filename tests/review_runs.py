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
from localeval.labels.review_items import ReviewRun
from localeval.labels.store import Label, LabelStore

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"


def run_cli(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def demo_copy(folder: Path) -> Path:
    data = folder / "demo.jsonl"
    shutil.copy(DEMO, data)
    return data


def demo_copies(folder: Path, n: int) -> Path:
    """A dataset of `n` samples: the demo's, over and over, each copy with ids of its own."""
    demo = rows(DEMO)
    data = folder / f"demo-{n}.jsonl"
    with data.open("w", encoding="utf-8") as out:
        for number in range(n):
            row = {**demo[number % len(demo)]}
            row["sample_id"] = f"{row['sample_id']}-{number}"
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return data


def label_everything(review: ReviewRun, reviewer: str) -> list[Label]:
    """Every verdict and score labelled by a rule: the judge is right when it is sure."""
    made = []
    for sample in review.samples:
        for v in review.verdicts[sample["sample_id"]]:
            mark = "right" if abs(v.raw - 0.5) > 0.2 else "wrong"
            made.append(review.label_for(sample["sample_id"], v.metric, v.index, mark, reviewer))
        for metric in review.judged_metrics(sample["sample_id"]):
            made.append(review.label_for(sample["sample_id"], metric, None, "too_high", reviewer))
    store = LabelStore.open(review.db)
    try:
        store.add(review.run.id, made)
    finally:
        store.close()
    return made


def evaluate(stand_ins: StandIns, data: Path, *args: Any, judge: Any = None) -> str:
    """Evaluate `data` with the hash judge (or `judge`); the run's id."""
    stand_ins.use(judge or HashJudge(), FakeEmbedder())
    result = run_cli("evaluate", data, "--no-progress", *args)
    assert result.exit_code in (0, 1), result.output
    return result.output.rsplit("Run ", 1)[1].split()[0]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
