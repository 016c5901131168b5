"""Offline, proven: localeval evaluates with every network call made to fail, and tries none.

Each test runs a fresh interpreter with tests/network_block/sitecustomize.py loaded first:
it makes every socket connection and name lookup fail and logs each attempt. Where the
system allows it (`unshare -rn`), the process also runs in a network namespace of its own,
with no interface but a down loopback, so native code (llama.cpp, tokenizers) is cut off too.
The offline switches are removed from the environment first: localeval must set them itself.

A judge on an inference server is the one exception: the block then lets exactly its
address through ($LOCALEVAL_NETWORK_ALLOW), without the namespace (which would cut off the
loopback the server listens on), and every other address still fails and is logged.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = Path(__file__).resolve().parent / "network_block"
DEMO = ROOT / "examples" / "demo.jsonl"
SWITCHES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK")


@cache
def isolation_prefix() -> tuple[str, ...]:
    """`unshare -rn` where this system allows a private network namespace, else nothing."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    probe = subprocess.run([unshare, "-rn", "true"], capture_output=True, check=False)
    return (unshare, "-rn") if probe.returncode == 0 else ()


def run_blocked(
    args: list[str],
    log: Path,
    timeout: float,
    extra_env: dict[str, str] | None = None,
    allow: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run Python with the network blocked; `allow` ("HOST:PORT") lets that address through."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in SWITCHES and not k.startswith(("HF_", "TRANSFORMERS_"))
    }
    env.update(extra_env or {})
    env["PYTHONPATH"] = str(BLOCK)
    env["LOCALEVAL_NETWORK_LOG"] = str(log)
    if allow is not None:
        env["LOCALEVAL_NETWORK_ALLOW"] = allow
    return subprocess.run(
        [*(isolation_prefix() if allow is None else ()), sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def log_lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def attempts(log: Path) -> list[str]:
    return [line for line in log_lines(log) if line.startswith("attempt ")]


def test_the_block_stops_and_logs_a_connection(tmp_path: Path) -> None:
    """The block itself works: a plain HTTP request fails and is logged (the tests below
    would prove nothing otherwise)."""
    log = tmp_path / "net.log"
    code = (
        "import socket, urllib.request\n"
        "for attempt in (\n"
        "    lambda: urllib.request.urlopen('http://example.com/', timeout=5),\n"
        "    lambda: socket.getaddrinfo('example.com', 443),\n"
        "    lambda: socket.socket().connect(('127.0.0.1', 9)),\n"
        "):\n"
        "    try:\n"
        "        attempt()\n"
        "        print('connected')\n"
        "    except OSError:\n"
        "        print('failed')\n"
    )
    done = run_blocked(["-c", code], log, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["failed"] * 3
    assert [line.split()[1] for line in attempts(log)] == [
        "create_connection",
        "getaddrinfo",
        "socket.connect",
    ]


def test_the_block_lets_through_the_allowed_address_and_no_other(tmp_path: Path) -> None:
    log = tmp_path / "net.log"
    with (
        socket.create_server(("127.0.0.1", 0)) as allowed,
        socket.create_server(("127.0.0.1", 0)) as other,
    ):
        ports = allowed.getsockname()[1], other.getsockname()[1]
        code = (
            "import socket\n"
            f"for host, port in (('127.0.0.1', {ports[0]}), ('127.0.0.1', {ports[1]}),"
            " ('example.com', 80)):\n"
            "    try:\n"
            "        socket.create_connection((host, port), timeout=5).close()\n"
            "        print('connected')\n"
            "    except OSError:\n"
            "        print('failed')\n"
        )
        done = run_blocked(["-c", code], log, timeout=60, allow=f"127.0.0.1:{ports[0]}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["connected", "failed", "failed"]
    assert [line.split()[:2] for line in attempts(log)] == [
        ["attempt", "create_connection"],
        ["attempt", "create_connection"],
    ]
    assert str(ports[1]) in attempts(log)[0] and "example.com" in attempts(log)[1]
    assert all(str(ports[0]) in line for line in log_lines(log) if line.startswith("allowed"))


def test_evaluate_with_a_judge_server_connects_to_it_and_nowhere_else(tmp_path: Path) -> None:
    from server_fakes import FakeServer, models_toml

    data = tmp_path / "one.jsonl"
    data.write_text(DEMO.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    models = tmp_path / "models.toml"
    cli = ["-m", "localeval.cli", "evaluate", str(data), "--no-progress", "-mfaithfulness"]
    env = {"LOCALEVAL_MODELS": str(models), "LOCALEVAL_DB": str(tmp_path / "db")}
    with FakeServer() as fake:
        models.write_text(models_toml(fake.url, retries=0), encoding="utf-8")
        log = tmp_path / "net.log"
        done = run_blocked(cli, log, timeout=120, extra_env=env, allow=f"127.0.0.1:{fake.port}")
        assert done.returncode in (0, 1), done.stderr
        assert attempts(log) == []
        allowed = [line for line in log_lines(log) if line.startswith("allowed ")]
        assert allowed and all(f"127.0.0.1', {fake.port}" in line for line in allowed)
        # the same run, with another address allowed: the server is refused, and logged
        refused = tmp_path / "refused.log"
        done = run_blocked(cli, refused, timeout=120, extra_env=env, allow="127.0.0.1:9")
    assert done.returncode == 3
    assert attempts(refused) and all(str(fake.port) in line for line in attempts(refused))


def test_importing_localeval_leaves_the_environment_alone() -> None:
    """The pytest plugin imports localeval in every test session of a project that has it
    installed: importing it (the command line's modules included) must not change the
    project's settings. Only running the command line or loading the embedder does."""
    code = (
        "import os\n"
        "os.environ['HF_HUB_OFFLINE'] = '0'\n"
        "os.environ.pop('TRANSFORMERS_OFFLINE', None)\n"
        "import localeval, localeval.testing, localeval.pytest_plugin, localeval.cli\n"
        "import localeval.backends.sentence_transformers, localeval.evaluation.scoring\n"
        "print(os.environ['HF_HUB_OFFLINE'], os.environ.get('TRANSFORMERS_OFFLINE'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "None"]


def test_the_command_line_sets_offline_before_the_libraries_load(tmp_path: Path) -> None:
    log = tmp_path / "net.log"
    code = (
        "from localeval.cli import main\n"
        "main(['cache', 'stats'], standalone_mode=False)\n"
        "import sentence_transformers, llama_cpp, transformers, huggingface_hub\n"
    )
    # a user's HF_HUB_OFFLINE=0 does not turn the network back on
    env = {"HF_HUB_OFFLINE": "0", "LOCALEVAL_DB": str(tmp_path / "db")}
    done = run_blocked(["-c", code], log, timeout=300, extra_env=env)
    assert done.returncode == 0, done.stderr
    assert attempts(log) == []
    assert [line for line in log_lines(log) if line.startswith("env ")] == [
        f"env {name}=1" for name in SWITCHES
    ]


@pytest.mark.real_models
def test_loading_the_embedder_sets_offline_and_connects_nowhere(tmp_path: Path) -> None:
    """The Python API (assert_rag_quality) runs no command line: the embedder sets the
    switches itself when it loads."""
    log = tmp_path / "net.log"
    code = (
        "from localeval.backends import embedder_backend\n"
        "from localeval.config import load_models_config\n"
        "entry = load_models_config().embedder()\n"
        "backend = embedder_backend(entry.backend)\n"
        "print(backend.load(entry.name, entry.settings).embed(['offline']).shape)\n"
    )
    done = run_blocked(["-c", code], log, timeout=300, extra_env={"HF_HUB_OFFLINE": "0"})
    assert done.returncode == 0, done.stderr
    assert attempts(log) == []
    assert [line for line in log_lines(log) if line.startswith("env ")] == [
        f"env {name}=1" for name in SWITCHES
    ]


@pytest.mark.real_models
def test_full_evaluation_with_network_blocked(tmp_path: Path) -> None:
    """A full `localeval evaluate` with the real judge and embedder, all four metrics."""
    data = tmp_path / "one.jsonl"
    data.write_text(DEMO.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    out = tmp_path / "results.json"
    log = tmp_path / "net.log"
    done = run_blocked(
        # --no-cache: the models must really run, not answer from an earlier run's cache
        [
            "-m",
            "localeval.cli",
            "evaluate",
            str(data),
            "-o",
            str(out),
            "--no-progress",
            "--no-cache",
        ],
        log,
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr  # gates may pass or fail; the run completes
    assert attempts(log) == []
    assert [line for line in log_lines(log) if line.startswith("env ")] == [
        f"env {name}=1" for name in SWITCHES
    ]
    report = json.loads(out.read_text(encoding="utf-8"))
    (sample,) = report["samples"]
    assert all(score is not None for score in sample["scores"].values()), sample["scores"]
    assert report["run"]["usage"]["judge_calls"] > 0
