"""A recorded fake of a judge server: OpenAI's completions API as vLLM (and other servers)
answer it, in a thread of the test process, on 127.0.0.1.

The reply shapes are vLLM's, written from its documentation (its OpenAI-compatible server,
`/tokenize`, `/detokenize`, `/version`; vLLM cannot run on these CPU machines); `shape`
switches the token probabilities to the chat-style form newer llama-servers use. Every
answer is a pure function of the prompt, like a real judge's at temperature 0: verdicts
from hashed weights over a fixed set of tokens, structured replies filled from the JSON
Schema the request carries. Tests make it misbehave (`fail_next`, `garbage`, ...) and
read what it was sent (`requests`).
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: tokens the fake's verdicts spread probability over
TOKENS = ("Yes", "No", " yes", "A", "B", "0", "1", "2", "5", "7", "9", "10", "Maybe", "<|im_end|>")
CHATML = "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
CHATML += "<|im_start|>assistant\n"
#: the Jinja form of the same template, for models.toml
CHATML_JINJA = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}<|im_start|>assistant\n{{ '' }}"  # (Jinja drops one trailing newline)
)


def weight(text: str, token: str) -> float:
    digest = hashlib.sha256(f"{text}\0{token}".encode()).digest()
    return 0.05 + int.from_bytes(digest[:4], "big") / 2**32


def fill(schema: dict[str, Any], seed: str) -> Any:
    """The simplest value that fits a JSON Schema of localeval's kinds."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: fill(v, seed + k) for k, v in schema["properties"].items()}
    if kind == "array":
        return [fill(schema["items"], f"{seed}{i}") for i in range(schema["minItems"])]
    if kind == "boolean":
        return True
    if kind == "integer":
        return schema["minimum"]
    words = hashlib.sha256(seed.encode()).hexdigest()
    return f"question {words[:6]}"[: schema.get("maxLength", 20)]


class FakeServer:
    """The server; `url` is its base_url. Use as a context manager."""

    def __init__(self, owned_by: str = "vllm", model: str = "judge-model", port: int = 0):
        self.owned_by = owned_by
        self.model = model
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.authorizations: list[str | None] = []
        self.lock = threading.Lock()
        self.fail_next = 0  # answer this many completions with HTTP 503 first
        self.garbage: str | None = None  # answer completions with this text, as is
        #: a test's own reply to a completion (None: the fake's)
        self.reply: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
        self.shape = "completions"  # or "chat": logprobs as chat completions give them
        self.delay_s = 0.0
        #: a test's choice of completions (by their body) that the fake holds for `hang_s`
        #: each: requests held in flight at a known point of a run, whatever its pace
        self.holds: Callable[[dict[str, Any]], bool] | None = None
        self.hang_s = 0.0
        self.held = 0  # completions held now
        self.in_flight = 0
        self.most_in_flight = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def completions(self) -> list[dict[str, Any]]:
        return [body for path, body in self.requests if path == "/v1/completions"]

    # -- answers --------------------------------------------------------------------------

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if path == "/v1/models":
            entry = {"id": self.model, "object": "model", "created": int(time.time())}
            entry |= {"owned_by": self.owned_by, "root": f"/models/{self.model}"}
            return 200, {"object": "list", "data": [entry | {"max_model_len": 4096}]}
        if path == "/version":
            return 200, {"version": "0.11.0"}
        if path == "/tokenize" and "messages" in body:
            system, user = (m["content"] for m in body["messages"])
            rendered = CHATML.format(system=system, user=user)
            return 200, {"tokens": [ord(c) for c in rendered], "count": len(rendered)}
        if path == "/tokenize":
            return 200, {"tokens": list(range(len(body["prompt"]))), "count": len(body["prompt"])}
        if path == "/detokenize":
            return 200, {"prompt": "".join(chr(t) for t in body["tokens"])}
        if path == "/v1/completions":
            return self._completion(body)
        return 404, {"error": {"message": f"no route {path}"}}

    def _completion(self, body: dict[str, Any]) -> tuple[int, Any]:
        with self.lock:
            if self.fail_next:
                self.fail_next -= 1
                return 503, {"error": {"message": "model is loading"}}
        if self.garbage is not None:
            return 200, self.garbage
        if self.reply is not None and (own := self.reply(body)) is not None:
            return 200, own
        prompt = body["prompt"]
        usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": 1}
        if "logprobs" in body:
            weights = {t: weight(prompt, t) for t in TOKENS}
            total = sum(weights.values())
            top = {t: math.log(w / total) for t, w in weights.items()}
            return 200, self._with_logprobs(top, usage)
        schema = body.get("structured_outputs", {}).get("json") or body.get(
            "response_format", {}
        ).get("json_schema", {}).get("schema")
        text = json.dumps(fill(schema, prompt), separators=(",", ":")) if schema else "{}"
        usage["completion_tokens"] = len(text) // 3
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": "stop"}
        return 200, {"object": "text_completion", "choices": [choice], "usage": usage}

    def _with_logprobs(self, top: dict[str, float], usage: dict[str, int]) -> dict[str, Any]:
        best = max(top, key=lambda t: top[t])
        if self.shape == "chat":
            listed = [
                {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top.items()
            ]
            logprobs: dict[str, Any] = {
                "content": [{"token": best, "logprob": top[best], "top_logprobs": listed}]
            }
        else:
            logprobs = {
                "text_offset": [0],
                "token_logprobs": [top[best]],
                "tokens": [best],
                "top_logprobs": [top],
            }
        choice = {"index": 0, "text": best, "logprobs": logprobs, "finish_reason": "length"}
        return {"id": "cmpl-1", "object": "text_completion", "choices": [choice], "usage": usage}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the judge's connections expect

            def log_message(self, *_: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # headers and body go out in two writes: without this, the client's
                # delayed ACK holds the second for 40 ms (as real servers, which set it)
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake.lock:
                    fake.requests.append((self.path, body))
                    fake.authorizations.append(self.headers.get("Authorization"))
                    fake.in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
                    held = self.path == "/v1/completions" and bool(fake.holds and fake.holds(body))
                    fake.held += held
                try:
                    if delay := fake.hang_s if held else fake.delay_s:
                        time.sleep(delay)
                    status, reply = fake.answer(self.path, body)
                finally:
                    with fake.lock:
                        fake.in_flight -= 1
                        fake.held -= held
                data = (reply if isinstance(reply, str) else json.dumps(reply)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

        return Handler


def models_toml(url: str, **settings: Any) -> str:
    """A models.toml whose default judge is the server at `url` and embedder the fake."""
    lines = ["[judges.server]", 'backend = "openai"', f'base_url = "{url}"']
    settings.setdefault("model", "judge-model")
    settings.setdefault("backoff_s", 0.01)
    settings.setdefault("retries", 2)
    for key, value in settings.items():
        lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + '\n[embedders.e]\nbackend = "fake"\n'
