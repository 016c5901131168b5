"""`evaluate --ray` with real models: the small smollm2-135m judge (in-process llama.cpp in
each actor, one thread) and the real embedder, on three demo samples, against the same run
in one process (all this machine's cores). The judge's numbers depend on how llama.cpp
splits its sums over threads, so the scores agree within its run-to-run tolerance, not to
the last digit; the judge is called as often (the prompt tokens it evaluates differ: each
actor's judge starts without the prefix a judge of the whole run still holds from the
sample before)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ray_cluster import RayCluster

from localeval.cli import main

pytestmark = [pytest.mark.real_models, pytest.mark.ray]

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"
METRICS = ("-m", "faithfulness", "-m", "context_recall", "-m", "answer_relevancy")
#: how far a score may move between runs of this judge with other thread counts
TOLERANCE = 0.02


def scored(out: Path) -> dict[str, Any]:
    return json.loads(out.read_text(encoding="utf-8"))


def test_real_models_on_two_actors_give_the_one_process_scores(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "three.jsonl"
    data.write_text("".join(DEMO.read_text(encoding="utf-8").splitlines(True)[:3]))
    runs = {}
    for where, extra in (("alone", ()), ("ray", ("--ray", ray_cluster.address))):
        monkeypatch.setenv("LOCALEVAL_DB", str(tmp_path / f"{where}.db"))
        out = tmp_path / f"{where}.json"
        command = ["evaluate", str(data), "--judge", "smollm2-135m", *METRICS, "-o", str(out)]
        result = CliRunner().invoke(main, [*command, "--no-progress", *extra])
        assert result.exit_code in (0, 1), result.output
        runs[where] = scored(out)
    alone, ray = runs["alone"], runs["ray"]
    assert ray["run"]["judge"] == alone["run"]["judge"]  # the same file, by its sha256
    assert ray["run"]["usage"]["judge_calls"] == alone["run"]["usage"]["judge_calls"]
    for mine, theirs in zip(ray["samples"], alone["samples"], strict=True):
        assert mine["sample_id"] == theirs["sample_id"]
        for metric, score in theirs["scores"].items():
            assert mine["scores"][metric] == pytest.approx(score, abs=TOLERANCE), metric
    assert "Ray: 3 samples scored by the actors" in result.stderr
