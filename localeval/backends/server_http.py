"""HTTP to a judge server, with the standard library only: one keep-alive connection per
request stream, bounded retries with backoff, and nothing but the configured host.

Only `base_url`'s host and port are ever connected to (no redirect is followed, no other
address looked up), which is what tests/test_offline.py checks from outside the process.
A connection error, a timeout, a 5xx or a 429 is retried after a wait that doubles, up to
`retries` times, each retry logged and counted; anything else the server says is final:
a 4xx names the server's reason, and a reply that is not JSON is garbage, never retried.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from localeval.errors import ConfigError, JudgeError

LOG = logging.getLogger("localeval.server")

#: the longest wait between two tries, whatever the backoff has doubled to
MAX_BACKOFF_S = 30.0
_RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})


class ServerError(JudgeError):
    """The judge server cannot be reached, refused a request, or replied with garbage."""


@dataclass(frozen=True)
class Endpoint:
    """Where the server is and how patiently to talk to it."""

    base_url: str
    api_key: str | None = None
    timeout_s: float = 120.0
    retries: int = 5
    backoff_s: float = 0.5

    @property
    def parts(self) -> tuple[str, str, int, str]:
        """(scheme, host, port, path prefix) of base_url."""
        split = urlsplit(self.base_url)
        if split.scheme not in ("http", "https") or not split.hostname:
            raise ConfigError(f"base_url '{self.base_url}' is not an http(s)://HOST[:PORT] URL")
        port = split.port or (443 if split.scheme == "https" else 80)
        return split.scheme, split.hostname, port, split.path.rstrip("/")

    @property
    def root(self) -> str:
        """The path prefix of the server's own endpoints (/props, /tokenize, /version):
        base_url's path without its OpenAI "/v1"."""
        prefix = self.parts[3]
        return prefix[: -len("/v1")] if prefix.endswith("/v1") else prefix


class Connection:
    """One keep-alive connection: the requests of one stream (a sample's prompts), in order.

    `on_retry` is called for each retried request (the judge counts them in its usage).
    `abort()` may be called from another thread: the request in progress fails at once,
    and no other is sent (Ctrl-C with samples in flight).
    """

    def __init__(self, endpoint: Endpoint, on_retry: Callable[[], None] | None = None):
        self.endpoint = endpoint
        self._on_retry = on_retry
        self._http: http.client.HTTPConnection | None = None
        self._aborted = threading.Event()

    def get(self, path: str, root: bool = False) -> Any:
        return self.request("GET", path, None, root)

    def post(self, path: str, body: dict[str, Any], root: bool = False) -> Any:
        return self.request("POST", path, body, root)

    def request(self, method: str, path: str, body: dict[str, Any] | None, root: bool) -> Any:
        """The JSON the server replied; ServerError once retries are spent or on a final
        answer. `root`: a path of the server's own (/props), not of its OpenAI API."""
        endpoint = self.endpoint
        url = (endpoint.root if root else endpoint.parts[3]) + path
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        delay = endpoint.backoff_s
        for attempt in range(endpoint.retries + 1):
            if self._aborted.is_set():
                raise ServerError(f"request to {endpoint.base_url} cancelled")
            try:
                status, text = self._send(method, url, data)
            except (OSError, http.client.HTTPException) as exc:
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                hint = _hint(exc, endpoint.timeout_s)
                self.close()  # the connection may be half-used: start a new one
            else:
                if status not in _RETRIED_STATUS:
                    return _reply(endpoint.base_url + path, status, text)
                problem = f"HTTP {status}: {_reason(text)}"
                hint = "It is up but failing (one still loading its model answers 503)."
            if attempt == endpoint.retries or self._aborted.is_set():
                break
            LOG.warning(
                "judge server %s: %s; retrying in %.1f s (retry %d of %d)",
                endpoint.base_url,
                problem,
                delay,
                attempt + 1,
                endpoint.retries,
            )
            if self._on_retry is not None:
                self._on_retry()
            self._aborted.wait(delay)
            delay = min(delay * 2, MAX_BACKOFF_S)
        tries = endpoint.retries + 1
        raise ServerError(
            f"judge server {endpoint.base_url} failed {tries} time{'s' * (tries > 1)}: "
            f"{problem}. {hint} (retries and timeout_s are set in models.toml)"
        )

    def _send(self, method: str, url: str, data: bytes | None) -> tuple[int, str]:
        if self._http is None:
            self._http = self._open()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        self._http.request(method, url or "/", body=data, headers=headers)
        response = self._http.getresponse()
        text = response.read().decode("utf-8", errors="replace")
        if response.will_close:
            self.close()
        return response.status, text

    def _open(self) -> http.client.HTTPConnection:
        scheme, host, port, _ = self.endpoint.parts
        timeout = self.endpoint.timeout_s
        connection: http.client.HTTPConnection
        if scheme == "https":
            context = ssl.create_default_context()
            connection = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=timeout)
        connection.connect()
        # small requests one after another on one connection: Nagle's algorithm would hold
        # each behind the server's delayed ACK
        if connection.sock is not None:
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection

    def abort(self) -> None:
        """Fail the request in progress now and send no other."""
        self._aborted.set()
        connection = self._http
        sock = getattr(connection, "sock", None) if connection is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):  # closed already
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None


def _hint(error: BaseException, timeout_s: float) -> str:
    """What a failed connection suggests: a server that is not there, or one that hangs."""
    if isinstance(error, TimeoutError | socket.timeout):
        return f"It accepted the request but did not answer within timeout_s ({timeout_s:g} s)."
    return "Is it running?"


def _reply(url: str, status: int, text: str) -> Any:
    if status >= 400:
        raise ServerError(f"judge server refused {url} (HTTP {status}): {_reason(text)}")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ServerError(
            f"judge server replied to {url} with something that is not JSON: {text[:200]!r}"
        ) from None


def _reason(text: str) -> str:
    """The server's own words for an error: its JSON `error`/`detail`, else the text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text.strip()[:300] or "(no text)"
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data))
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])[:300]
        return json.dumps(error, ensure_ascii=False)[:300]
    return str(data)[:300]


def wait_until_up(endpoint: Endpoint, seconds: float) -> bool:
    """Whether the server accepts connections within `seconds` (for scripts and tests)."""
    _, host, port, _ = endpoint.parts
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False
