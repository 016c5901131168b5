"""The server judge against llama.cpp's own llama-server, built from the llama.cpp sources
llama-cpp-python vendors (scripts/llama_server_build.py; cached once built), serving
SmolLM2-135M on 127.0.0.1 with the command line docs/servers.md gives.

SmolLM2, because it makes "within 0.01 of in-process" a test of the server alone: its
tokenizer splits the prompt where the in-process judge's segments meet, so both read the
same tokens (Qwen2.5's merges ".\\n\\n" across them and moves verdicts by up to 0.06 for
that reason alone, docs/measurements/servers.md), and it is the fastest judge there is.

Every score of a few demo samples within 0.01 of the in-process judge, none unparseable,
verdicts read from its token probabilities; `--parallel 2` slots with two samples in
flight; a server killed mid-run and restarted; and a server that serves another model,
none, answers 5xx while it loads, or hangs: one clear line each.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest
from click.testing import CliRunner
from llama_server import SMOLLM, LlamaCppServer, free_port
from run_db import stopped_when_its_judge_dies

from localeval.cli import main

pytestmark = [pytest.mark.real_models, pytest.mark.real_server]

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo.jsonl"
#: two English samples (one that dodges the question) and a Chinese one
SAMPLES = ("billing-1", "product-3", "zh-billing-1")
METRICS = ["faithfulness", "context_recall", "context_precision", "answer_relevancy", "rubric"]
#: the largest difference allowed between a score in-process and through llama-server
TOLERANCE = 0.01
#: the same with samples in flight on 2 slots: the batch moves llama.cpp's arithmetic, by up to
#: 0.018 over 8 repeats under load (docs/measurements/servers.md); a request answered from
#: another slot's prompt would move a score by far more
IN_FLIGHT_TOLERANCE = 0.05


def models_toml(url: str, **settings: Any) -> str:
    """The in-process judge on the GGUF ("local") and the same GGUF behind the server
    ("server", its chat template as the server renders it), with the fake embedder (the
    tests are about the judge)."""
    table = {"model": "smollm2", "retries": 1, "backoff_s": 0.2} | settings
    lines = ["[judges.local]", f'path = "{SMOLLM}"', "threads = 1", "n_ctx = 8192"]
    lines += ["[judges.server]", 'backend = "openai"', f'base_url = "{url}"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    return "\n".join(lines) + '\n[embedders.e]\nbackend = "fake"\n'


def data(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    path = tmp_path / "data.jsonl"
    chosen = [row for row in rows if row.get("sample_id", row.get("id")) in SAMPLES]
    assert len(chosen) == len(SAMPLES)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in chosen))
    return path


def command(data_file: Path, out: Path, judge: str) -> list[str]:
    args = ["evaluate", str(data_file), "-o", str(out), "--no-progress", "--judge", judge]
    # context precision asks the judge for every sample; answer relevancy's questions are
    # structured replies, whose grammar the server applies
    args += ["--context-precision-usefulness", "judge", "--answer-relevancy-questions", "2"]
    return args + [f"-m{m}" for m in METRICS]


def evaluate(models: Path, data_file: Path, out: Path, judge: str) -> dict[str, Any]:
    """`evaluate` in this process, with its own models.toml and run database."""
    files = ["--models", str(models), "--db", str(out.with_suffix(".db"))]
    result = CliRunner().invoke(main, [*command(data_file, out, judge), *files])
    assert result.exit_code in (0, 1), result.output
    return dict(json.loads(out.read_text()))


def scores(report: dict[str, Any]) -> dict[tuple[str, str], float | None]:
    return {
        (s["sample_id"], metric): value
        for s in report["samples"]
        for metric, value in s["scores"].items()
    }


def verdicts(report: dict[str, Any]) -> list[float]:
    """Every faithfulness and context recall verdict's P(Yes), in order."""
    found = []
    for sample in report["samples"]:
        found += sample["details"]["faithfulness"]["support"]
        found += sample["details"]["context_recall"]["attribution"]
    return found


@pytest.fixture(scope="module")
def server(llama_server_binary: Path) -> Iterator[LlamaCppServer]:
    with LlamaCppServer(llama_server_binary) as running:
        yield running


@pytest.fixture(scope="module")
def runs(server: LlamaCppServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo samples scored in-process and through llama-server (one slot)."""
    folder = tmp_path_factory.mktemp("runs")
    models = folder / "models.toml"
    models.write_text(models_toml(server.url), encoding="utf-8")
    data_file = data(folder)
    local = evaluate(models, data_file, folder / "local.json", "local")
    started = time.monotonic()
    remote = evaluate(models, data_file, folder / "server.json", "server")
    seconds = time.monotonic() - started
    return {"local": local, "server": remote, "seconds": seconds, "data": data_file}


def test_llama_server_scores_within_001_of_the_in_process_judge(runs: dict[str, Any]) -> None:
    local, remote = scores(runs["local"]), scores(runs["server"])
    assert local.keys() == remote.keys()
    assert None not in remote.values(), runs["server"]["samples"]  # nothing unparseable
    differences = {key: abs(remote[key] - value) for key, value in local.items()}  # type: ignore[operator]
    print(f"\nlargest score difference {max(differences.values()):.4f} over {len(local)} scores")
    assert max(differences.values()) <= TOLERANCE, differences
    # the verdicts are probabilities read from its logprobs, not a generated Yes or No
    theirs, ours = verdicts(runs["server"]), verdicts(runs["local"])
    assert len(theirs) == len(ours) and any(0.02 < p < 0.98 for p in theirs)
    assert max(abs(a - b) for a, b in zip(theirs, ours, strict=True)) <= TOLERANCE
    judge = runs["server"]["run"]["judge"]
    assert judge["server"]["kind"] == "llama-server"  # told apart by /v1/models
    assert judge["settings"]["constraint"] == "grammar"
    assert judge["server"]["/props"]["n_ctx"] == 8192


def test_parallel_slots_with_samples_in_flight_give_the_same_scores(
    runs: dict[str, Any], llama_server_binary: Path, tmp_path: Path
) -> None:
    with LlamaCppServer(llama_server_binary, parallel=2) as two_slots:
        models = tmp_path / "models.toml"
        models.write_text(models_toml(two_slots.url, concurrency=2), encoding="utf-8")
        started = time.monotonic()
        report = evaluate(models, runs["data"], tmp_path / "two.json", "server")
        seconds = time.monotonic() - started
        slots = json.loads(urlopen(two_slots.url.removesuffix("/v1") + "/slots").read())
    assert [slot.get("id_task", -1) >= 0 for slot in slots] == [True, True]  # both served
    assert report["run"]["judge"]["server"]["/props"]["total_slots"] == 2
    one, two = scores(runs["server"]), scores(report)
    assert two.keys() == one.keys()
    largest = max(abs(two[key] - value) for key, value in one.items())  # type: ignore[operator]
    print(
        f"\none slot: {runs['seconds']:.1f} s; two slots, two in flight: {seconds:.1f} s; "
        f"largest score difference {largest:.4f}"
    )
    assert largest <= IN_FLIGHT_TOLERANCE


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """A report without what differs between two runs of the same evaluation."""
    report = json.loads(json.dumps(report))
    for key in ("id", "created", "usage", "judge"):
        del report["run"][key]
    return report


def test_a_server_killed_mid_run_and_restarted_resumes_to_identical_results(
    runs: dict[str, Any], llama_server_binary: Path, tmp_path: Path
) -> None:
    out = tmp_path / "resumed.json"
    cli = [sys.executable, "-m", "localeval.cli", *command(runs["data"], out, "server")]
    db = tmp_path / "runs.db"
    with LlamaCppServer(llama_server_binary) as server:
        models = tmp_path / "models.toml"
        models.write_text(models_toml(server.url), encoding="utf-8")
        env = {**os.environ, "LOCALEVAL_MODELS": str(models), "LOCALEVAL_DB": str(db)}
        env["PYTHONPATH"] = str(ROOT)
        stopped_when_its_judge_dies(cli, env, db, server.kill)
        server.start()  # the same address, the same model: the same judge
        done = subprocess.run(cli, env=env, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert "Resuming run" in done.stderr
    resumed = json.loads(out.read_text())
    assert comparable(resumed) == comparable(runs["server"])
    # what a restarted server (or another with the same model) says of itself is the same
    assert resumed["run"]["judge"]["server"] == runs["server"]["run"]["judge"]["server"]


# -- a server that cannot judge: one clear line each ----------------------------------------


def refusal(models: Path, tmp_path: Path) -> tuple[int, str]:
    """Exit status and output of `evaluate` with the server judge (a subprocess, as a user
    runs it: what it prints is all there is)."""
    cli = [sys.executable, "-m", "localeval.cli", "evaluate", str(DEMO), "--no-progress"]
    env = {**os.environ, "LOCALEVAL_MODELS": str(models), "PYTHONPATH": str(ROOT)}
    env["LOCALEVAL_DB"] = str(tmp_path / "refused.db")
    done = subprocess.run(
        [*cli, "--judge", "server", "-mfaithfulness"], env=env, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr


def one_line(output: str) -> str:
    """The one line that says what is wrong (beside the progress and retry lines)."""
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, output
    return errors[0].removeprefix("Error: ")


def test_a_server_serving_another_model_is_named_in_one_line(
    server: LlamaCppServer, tmp_path: Path
) -> None:
    models = tmp_path / "models.toml"
    models.write_text(models_toml(server.url, model="qwen2.5-7b"), encoding="utf-8")
    status, output = refusal(models, tmp_path)
    assert status == 2
    assert one_line(output) == (
        f"judge server {server.url} does not serve model 'qwen2.5-7b' "
        "(it serves: smollm2); fix 'model' in models.toml"
    )


def test_no_server_at_the_address_is_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    models = tmp_path / "models.toml"
    models.write_text(models_toml(url), encoding="utf-8")
    status, output = refusal(models, tmp_path)
    assert status == 3
    assert one_line(output) == (
        f"judge server {url} failed 2 times: ConnectionRefusedError: [Errno 111] Connection "
        "refused. Is it running? (retries and timeout_s are set in models.toml)"
    )


def test_a_server_started_without_a_model_is_one_line(
    llama_server_binary: Path, tmp_path: Path
) -> None:
    # llama-server without -m serves the models of a folder (router mode): here, none
    empty = tmp_path / "no-models"
    empty.mkdir()
    server = LlamaCppServer(
        llama_server_binary, None, alias=None, extra=("--models-dir", str(empty))
    )
    env = {**os.environ, "LLAMA_CACHE": str(empty), "HF_HUB_OFFLINE": "1"}
    try:
        server.launch(env=env)
        wait_for_models_status(server, 200)
        models = tmp_path / "models.toml"
        models.write_text(models_toml(server.url), encoding="utf-8")
        status, output = refusal(models, tmp_path)
    finally:
        server.kill()
    assert status == 2
    assert one_line(output) == (
        f"judge server {server.url} serves no model (its /models lists none); "
        "start it with the judge's model"
    )


def test_a_server_answering_503_while_it_loads_is_one_line(
    llama_server_binary: Path, tmp_path: Path
) -> None:
    # a model file that never finishes arriving (a pipe no one writes): llama-server
    # answers every request "503 Loading model", as while it loads a large model
    pipe = tmp_path / "loading.gguf"
    os.mkfifo(pipe)
    server = LlamaCppServer(llama_server_binary, pipe)
    try:
        server.launch()
        wait_for_models_status(server, 503)
        models = tmp_path / "models.toml"
        models.write_text(models_toml(server.url), encoding="utf-8")
        status, output = refusal(models, tmp_path)
    finally:
        server.kill()
    assert status == 3
    assert one_line(output) == (
        f"judge server {server.url} failed 2 times: HTTP 503: Loading model. It is up but "
        "failing (one still loading its model answers 503). (retries and timeout_s are set "
        "in models.toml)"
    )


def wait_for_models_status(server: LlamaCppServer, wanted: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urlopen(f"{server.url}/models", timeout=2) as reply:
                status = reply.status
        except HTTPError as error:
            status = error.code
        except OSError:
            time.sleep(0.1)
            continue
        assert status == wanted
        return
    raise TimeoutError("llama-server did not answer /v1/models")


def test_a_server_that_hangs_is_one_line_after_its_timeouts(
    server: LlamaCppServer, tmp_path: Path
) -> None:
    models = tmp_path / "models.toml"
    models.write_text(models_toml(server.url, timeout_s=1.0), encoding="utf-8")
    assert server.process is not None
    server.process.send_signal(signal.SIGSTOP)  # frozen: connections accepted, no reply
    try:
        status, output = refusal(models, tmp_path)
    finally:
        server.process.send_signal(signal.SIGCONT)
    assert status == 3
    assert one_line(output) == (
        f"judge server {server.url} failed 2 times: TimeoutError: timed out. It accepted the "
        "request but did not answer within timeout_s (1 s). (retries and timeout_s are set in "
        "models.toml)"
    )
