"""llama-cpp-python's own OpenAI-compatible server (`python -m llama_cpp.server`, the
[server] extra) on 127.0.0.1, serving a provisioned GGUF, for the real-server tests."""

from __future__ import annotations

import json
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
