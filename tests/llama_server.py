"""The real judge servers of the tests, on 127.0.0.1, serving a provisioned GGUF:
llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, the [server]
extra) and llama.cpp's own llama-server (built by scripts/llama_server_build.py)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SMOLLM = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """One server process; `url` is its base_url. `start()` waits until it answers."""

    def __init__(self, model: Path = SMOLLM, port: int | None = None, threads: int = 2):
        self.model = model
        self.port = port or free_port()
        self.threads = threads
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 120) -> LlamaServer:
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
            "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", "8192", "--n_batch", "512", "--n_threads", str(self.threads),
            "--n_threads_batch", str(self.threads), "--verbose", "false",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "llama_cpp.server exited at start"
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as reply:
                    if json.loads(reply.read())["data"]:
                        return self
            except OSError:
                time.sleep(0.2)
        raise TimeoutError("llama_cpp.server did not start")

    def kill(self) -> None:
        """kill -9: the server dies mid-request, as a crashed one does."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.kill()


def models_toml(url: str, **settings: Any) -> str:
    """models.toml with the server judge (template read from the GGUF) and the fake
    embedder (the tests are about the judge)."""
    table = {"model": ALIAS, "chat_template": str(SMOLLM), "retries": 2, "backoff_s": 0.2}
    lines = ["[judges.server]", 'backend = "openai"', f'base_url = "{url}"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in (table | settings).items()]
    return "\n".join(lines) + '\n[embedders.e]\nbackend = "fake"\n'


def build_llama_server() -> Path:
    """llama.cpp's llama-server for this CPU, built once and cached by
    scripts/llama_server_build.py (seconds when cached; minutes to build)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "llama_server_build.py")],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"building llama-server failed:\n{done.stderr[-3000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


class LlamaCppServer:
    """llama.cpp's own llama-server serving a GGUF on 127.0.0.1: the command line
    docs/servers.md gives, with `--parallel` slots (each holding `n_ctx` tokens)."""

    def __init__(
        self,
        binary: Path,
        model: Path | None = SMOLLM,
        parallel: int = 1,
        alias: str | None = ALIAS,
        threads: int = 1,
        n_ctx: int = 8192,
        extra: tuple[str, ...] = (),
    ):
        self.binary, self.model, self.port = binary, model, free_port()
        self.parallel, self.alias, self.threads, self.n_ctx = parallel, alias, threads, n_ctx
        self.extra = extra
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        command = [str(self.binary), "--host", "127.0.0.1", "--port", str(self.port)]
        if self.model is not None:
            command += ["-m", str(self.model)]
        if self.alias is not None:
            command += ["--alias", self.alias]
        # -c is shared among the slots: each slot holds n_ctx tokens. -fa off: llama-server
        # turns flash attention on by default, whose half-precision CPU kernel moves P(Yes)
        # by up to 0.03 from the in-process judge's (measured, docs/measurements/servers.md)
        command += ["-c", str(self.n_ctx * self.parallel), "--parallel", str(self.parallel)]
        command += ["-fa", "off"]
        return [*command, "-t", str(self.threads), "-tb", str(self.threads), *self.extra]

    def launch(self, env: dict[str, str] | None = None) -> LlamaCppServer:
        """Start the process and return at once (the model may still be loading)."""
        self.process = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        return self

    def start(self, timeout: float = 120) -> LlamaCppServer:
        """Start it and wait until /health says the model is loaded."""
        self.launch()
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"llama-server exited: {self.command()}"
            try:
                health = f"http://127.0.0.1:{self.port}/health"
                with urllib.request.urlopen(health, timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        raise TimeoutError("llama-server did not start")

    def kill(self) -> None:
        """kill -9: the server dies mid-request, as a crashed one does."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # (a frozen one too)
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> LlamaCppServer:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.kill()
