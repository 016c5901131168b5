"""Serving the review page on 127.0.0.1 with uvicorn: the port is bound here first, so a
port in use is one clear line and port 0 gives a free one whose number is known before
the server starts."""

from __future__ import annotations

import errno
import socket
import threading
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette

from localeval.errors import UsageError, param

HOST = "127.0.0.1"


def bind_local(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:port (0: a free port); UsageError when it is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # the port of a server just stopped is free at once (its closed connections wait out
    # TIME_WAIT); a port another socket listens on is still refused
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} on {HOST} is in use; give another {param('port')}, or leave it out "
                "for a "
                "free one"
            ) from None
        raise UsageError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{host}:{port}/"


class ReadyServer(uvicorn.Server):
    """A uvicorn server that says when it serves: `ready` is set once it listens (or once
    it ended without, so that no one waits for it forever)."""

    def __init__(self, config: uvicorn.Config):
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.ready.set()


def review_server(app: Starlette) -> ReadyServer:
    """A uvicorn server of the app, quiet but for warnings (set `should_exit` to stop it)."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    return ReadyServer(config)


def serve(
    server: uvicorn.Server, sock: socket.socket, on_start: Callable[[], None] | None = None
) -> None:
    """Serve on the bound socket until Ctrl-C or SIGTERM (uvicorn stops gracefully on
    either, in the main thread) or `server.should_exit`; `on_start` is called first (the
    socket already queues connections)."""
    if on_start is not None:
        on_start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if isinstance(server, ReadyServer):
            server.ready.set()  # ended, whether it served or not
