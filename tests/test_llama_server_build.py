"""scripts/llama_server_build.py: llama-server built with the wheel's flags, cached per flag
set, and kept only once it has served a completion (fake builds, real processes; the real
build is tests/test_llama_server_real.py's fixture)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from script_modules import load_script

ROOT = Path(__file__).resolve().parent.parent
CPUINFO = Path(__file__).resolve().parent / "cpuinfo"


sb = load_script("llama_server_build")
lb = sys.modules["llama_build"]


def build_for(cpuinfo: str) -> object:
    flags = lb.parse_cpu_flags((CPUINFO / cpuinfo).read_text())
    return lb.choose_build("x86_64", "Linux", flags, "cpu")


AMD = build_for("amd_epyc_avx2.txt")  # no AVX-512, as a CI runner may be
XEON = build_for("intel_xeon_sapphire_rapids_amx.txt")


def test_the_cache_key_names_the_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOCALEVAL_WHEEL_CACHE", str(tmp_path))
    assert sb.server_key(AMD) != sb.server_key(XEON)
    assert sb.server_cache(AMD).parent == tmp_path == lb.wheel_cache(AMD).parent
    # beside the wheels, never inside a wheel's folder (which a wheel rebuild empties)
    assert sb.server_cache(AMD) != lb.wheel_cache(AMD)
    assert sb.server_cache(AMD).name.startswith("llama-server-")


#: a /completion reply to the check's prompt, as llama-server gives it (trimmed)
REPLY = {
    "content": " 18, 1",
    "completion_probabilities": [
        {
            "id": 1308,
            "token": " 1",
            "logprob": -0.01,
            "top_logprobs": [
                {"id": 1308, "token": " 1", "bytes": [32, 49], "logprob": -0.01},
                {"id": 2272, "token": " 2", "bytes": [32, 50], "logprob": -5.2},
            ],
        }
    ],
}


def test_a_served_completion_is_judged_by_its_text_and_probabilities() -> None:
    assert sb.judge_reply(REPLY).ok
    wrong = REPLY | {"content": " 12, 13"}
    assert sb.judge_reply(wrong).what == (
        "gave wrong output: after '... 16, 17,' it continues ' 12, 13'"
    )
    flat = json.loads(json.dumps(REPLY))
    for entry in flat["completion_probabilities"][0]["top_logprobs"]:
        entry["logprob"] = -math.log(2)
    assert "all equal" in sb.judge_reply(flat).what
    assert sb.judge_reply({"content": " 18"}).what.startswith("gave no token probabilities")


def test_a_binary_that_crashes_is_named_by_its_signal(tmp_path: Path) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\nkill -ILL $$\n")
    binary.chmod(0o755)
    verdict = sb.verify(binary, tmp_path / "model.gguf", timeout=30)
    assert not verdict.ok
    assert verdict.what.startswith("crashed with SIGILL (illegal instruction")


#: a "llama-server" that comes up, then crashes on the first completion it is asked for
CRASHES_WHILE_SERVING = """#!PYTHON
import os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"status": "ok"}')

    def do_POST(self):
        os.kill(os.getpid(), signal.SIGILL)

port = int(sys.argv[sys.argv.index("--port") + 1])
HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def test_a_binary_that_crashes_while_serving_is_named_by_its_signal(tmp_path: Path) -> None:
    binary = tmp_path / "llama-server"
    binary.write_text(CRASHES_WHILE_SERVING.replace("PYTHON", sys.executable))
    binary.chmod(0o755)
    verdict = sb.verify(binary, tmp_path / "model.gguf", timeout=30)
    assert verdict.what.startswith("crashed with SIGILL (illegal instruction")


class FakeBuilds:
    """Steps whose builds are files, and whose check passes for the builds named good."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.compiled = 0
        self.verified: list[str] = []
        self.said: list[str] = []
        self.next_build = "good"

    def fetch(self, into: Path) -> Path:
        into.mkdir(parents=True)
        return into

    def compile(self, sources: Path, build: object, into: Path) -> Path:
        self.compiled += 1
        into.mkdir(parents=True)
        (into / "llama-server").write_text(self.next_build)
        return into / "llama-server"

    def verify(self, binary: Path, model: Path) -> object:
        self.verified.append(binary.read_text())
        if binary.read_text() == "good":
            return lb.Verdict(True, "works")
        return lb.Verdict(False, "crashed with SIGILL (illegal instruction: ...)")

    def steps(self) -> object:
        return sb.Steps(self.fetch, self.compile, self.verify, self.said.append)


@pytest.fixture
def builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeBuilds:
    monkeypatch.setenv("LOCALEVAL_WHEEL_CACHE", str(tmp_path / "cache"))
    return FakeBuilds(tmp_path)


def test_a_build_is_cached_once_it_serves_and_then_reused(builds: FakeBuilds) -> None:
    model = builds.tmp / "model.gguf"
    first = sb.ensure(AMD, model, builds.steps())
    assert first == sb.server_cache(AMD) / "llama-server" and first.read_text() == "good"
    again = sb.ensure(AMD, model, builds.steps())
    assert again == first and builds.compiled == 1
    assert builds.verified == ["good", "good"]  # checked again before it is used
    record = json.loads((sb.server_cache(AMD) / "llama-server.json").read_text())
    assert record["key"] == sb.server_key(AMD) and record["cmake_args"] == list(AMD.cmake_args)
    # another CPU's flags: another build, beside this one
    sb.ensure(XEON, model, builds.steps())
    assert builds.compiled == 2 and first.is_file()


def test_a_cached_binary_that_fails_is_thrown_away_and_rebuilt(builds: FakeBuilds) -> None:
    cache = sb.server_cache(AMD)
    cache.mkdir(parents=True)
    (cache / "llama-server").write_text("copied from another machine")
    binary = sb.ensure(AMD, builds.tmp / "model.gguf", builds.steps())
    assert binary.read_text() == "good" and builds.compiled == 1
    assert builds.said[0].startswith("the cached llama-server crashed with SIGILL")


def test_a_build_that_fails_its_check_is_not_cached(builds: FakeBuilds) -> None:
    builds.next_build = "bad"
    with pytest.raises(SystemExit) as stopped:
        sb.ensure(AMD, builds.tmp / "model.gguf", builds.steps())
    message = str(stopped.value)
    assert message.startswith("llama-server: the build crashed with SIGILL")
    assert "-DGGML_AVX2=ON" in message and "to try: CMAKE_ARGS" in message
    assert not (sb.server_cache(AMD) / "llama-server").exists()
