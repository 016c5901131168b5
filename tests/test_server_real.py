"""The server judge against a real server: llama-cpp-python's OpenAI-compatible server
(tests/llama_server.py) serving SmolLM2-135M on 127.0.0.1, small enough for CI.

Every metric through it with zero unparseable replies; its numbers against the in-process
judge on the same GGUF; samples in flight; a server killed mid-run (the run resumes when
it is back); and no connection but to the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from llama_server import SMOLLM, LlamaServer, models_toml
from run_db import stopped_when_its_judge_dies
from test_offline import attempts, log_lines, run_blocked

from localeval.backends.fake import HashEmbedder
from localeval.backends.openai import OpenAIBackend
from localeval.cli import main
from localeval.config import load_models_config
from localeval.data.samples import Sample, load_samples
from localeval.judge import Prompt
from localeval.metrics import Tools, build_metric
from localeval.schema import Schema
from localeval.tools import load_tools

pytestmark = pytest.mark.real_models

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo.jsonl"
METRICS = ["faithfulness", "context_recall", "context_precision", "answer_relevancy", "rubric"]
#: |P(Yes) in-process - P(Yes) on the server| on the same GGUF, and the same for each
#: choice probability: 0.0008 at most measured on SmolLM2 (docs/measurements/servers.md). The two
#: read the same text; only how llama.cpp batches its tokens differs (segments in-process,
#: whole prompts on the server). A tokenizer that merges tokens across the segments'
#: boundaries (Qwen2.5's ".\n\n") moves them further: up to 0.06, measured
TOLERANCE = 0.005


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    with LlamaServer() as running:
        yield running


@pytest.fixture
def models(server: LlamaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "server.toml"
    path.write_text(models_toml(server.url), encoding="utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(path))
    return path


def rows(tmp_path: Path, count: int) -> Path:
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(DEMO.read_text().splitlines()[:count]) + "\n", encoding="utf-8")
    return data


def test_every_metric_through_the_server_with_zero_unparseable_replies(
    models: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results.json"
    args = ["evaluate", str(rows(tmp_path, 2)), "-o", str(out), "--no-progress"]
    # --answer-relevancy-questions: answer relevancy's generated questions, structured replies too
    metrics = [f"-m{m}" for m in METRICS] + ["--answer-relevancy-questions", "2"]
    result = CliRunner().invoke(main, args + metrics)
    assert result.exit_code in (0, 1), result.output
    report = json.loads(out.read_text())
    for sample in report["samples"]:
        assert None not in sample["scores"].values(), sample["details"]
    judge = report["run"]["judge"]
    assert judge["server"]["kind"] == "llama-cpp-python"  # told apart by /v1/models
    assert judge["settings"]["constraint"] == "grammar"


class Recording:
    """The in-process judge, noting every call and its answer."""

    def __init__(self, judge: Any):
        self.judge, self.usage, self.identity = judge, judge.usage, judge.identity
        self.name = judge.name
        self.calls: list[tuple[str, Prompt, Any, Any]] = []

    def yes_probability(self, prompt: Prompt) -> float:
        value: float = self.judge.yes_probability(prompt)
        self.calls.append(("yes", prompt, None, value))
        return value

    def choice_probabilities(self, prompt: Prompt, options: Any) -> list[float]:
        value: list[float] = self.judge.choice_probabilities(prompt, options)
        self.calls.append(("choice", prompt, list(options), value))
        return value

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        value = self.judge.generate(prompt, schema)
        self.calls.append(("generate", prompt, schema, value))
        return value

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        return bool(self.judge.fits(prompt, reserve))


def test_the_server_judge_agrees_with_the_in_process_judge(server: LlamaServer) -> None:
    by_id = {s.sample_id: s for s in load_samples(DEMO)}
    # two English samples (one that dodges the question), a Chinese one
    samples: list[Sample] = [by_id[i] for i in ("billing-1", "product-3", "zh-billing-1")]
    # answer relevancy writes 2 questions (evidence), so that its structured replies count
    metrics = [build_metric(m, {"answer_relevancy": {"n_questions": 2}}) for m in METRICS]
    local = load_tools(load_models_config(), metrics, "smollm2-135m")
    recording = Recording(local.judge)
    tools = Tools(recording, HashEmbedder(), local.verdict_thresholds)  # type: ignore[arg-type]
    for sample in samples:
        for metric in metrics:
            metric.score(sample, tools)
    backend = OpenAIBackend()
    table = {"base_url": server.url, "model": "smollm2", "chat_template": str(SMOLLM)}
    remote = backend.load("server", backend.settings(table, "test", ROOT))
    differences: list[float] = []
    replies = [0, 0]  # structured replies: the same, all
    for kind, prompt, extra, value in recording.calls:
        if kind == "yes":
            differences.append(abs(remote.yes_probability(prompt) - value))
        elif kind == "choice":
            theirs = remote.choice_probabilities(prompt, extra)
            differences += [abs(a - b) for a, b in zip(theirs, value, strict=True)]
        else:
            replies[0] += remote.generate(prompt, extra) == value
            replies[1] += 1
    print(
        f"\n{len(recording.calls)} calls: largest probability difference {max(differences):.4f}, "
        f"median {sorted(differences)[len(differences) // 2]:.5f}; structured replies equal: "
        f"{replies[0]} of {replies[1]}"
    )
    assert max(differences) <= TOLERANCE
    assert replies[0] == replies[1]


def test_samples_in_flight_score_as_one_at_a_time(
    server: LlamaServer, models: Path, tmp_path: Path
) -> None:
    data = rows(tmp_path, 3)
    reports = []
    for concurrency in (1, 3):
        models.write_text(models_toml(server.url, concurrency=concurrency), encoding="utf-8")
        out = tmp_path / f"c{concurrency}.json"
        args = ["evaluate", str(data), "-o", str(out), "--no-progress", "--no-cache"]
        result = CliRunner().invoke(main, [*args, "-mfaithfulness"])
        assert result.exit_code in (0, 1), result.output
        reports.append(json.loads(out.read_text()))
    one, three = reports
    assert [s["sample_id"] for s in three["samples"]] == [s["sample_id"] for s in one["samples"]]
    for a, b in zip(one["samples"], three["samples"], strict=True):
        for metric, score in a["scores"].items():
            assert b["scores"][metric] == pytest.approx(score, abs=TOLERANCE), metric


def test_a_server_killed_mid_run_and_restarted_lets_the_run_finish(tmp_path: Path) -> None:
    data = rows(tmp_path, 3)
    out = tmp_path / "results.json"
    command = [sys.executable, "-m", "localeval.cli", "evaluate", str(data), "-o", str(out)]
    command += ["--no-progress", "-mfaithfulness"]
    with LlamaServer() as server:
        models = tmp_path / "server.toml"
        models.write_text(models_toml(server.url, retries=1), encoding="utf-8")
        db = tmp_path / "runs.db"
        env = {**os.environ, "LOCALEVAL_MODELS": str(models), "LOCALEVAL_DB": str(db)}
        env["PYTHONPATH"] = str(ROOT)
        stopped_when_its_judge_dies(command, env, db, server.kill)
        server.start()  # the same address: the same judge
        done = subprocess.run(command, env=env, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert "Resuming run" in done.stderr
    report = json.loads(out.read_text())
    assert len(report["samples"]) == 3
    assert all(s["scores"]["faithfulness"] is not None for s in report["samples"])


def test_a_run_through_the_server_connects_to_it_and_nowhere_else(
    server: LlamaServer, tmp_path: Path
) -> None:
    models = tmp_path / "server.toml"
    models.write_text(models_toml(server.url, retries=0), encoding="utf-8")
    env = {"LOCALEVAL_MODELS": str(models), "LOCALEVAL_DB": str(tmp_path / "db")}
    log = tmp_path / "net.log"
    cli = ["-m", "localeval.cli", "evaluate", str(rows(tmp_path, 1)), "--no-progress"]
    done = run_blocked([*cli, "-mfaithfulness"], log, 300, env, allow=f"127.0.0.1:{server.port}")
    assert done.returncode in (0, 1), done.stderr
    assert attempts(log) == []
    assert any(line.startswith("allowed ") for line in log_lines(log))
