"""Loaded at interpreter start when this folder is on PYTHONPATH (tests/test_offline.py):
every socket connection and every name lookup fails, and each attempt is written to
$LOCALEVAL_NETWORK_LOG, so that a test can assert that none was even tried.

$LOCALEVAL_NETWORK_ALLOW="HOST:PORT" lets exactly that address through (a judge server's):
connecting to it, and looking it up, works and is logged as "allowed"; any other address
still fails and is logged as an attempt.

At exit, the values of the offline switches as the process saw them are written to the
same log, to show that localeval set them itself.
"""

from __future__ import annotations

import atexit
import errno
import os
import socket
from collections.abc import Callable
from typing import Any

_LOG = os.environ.get("LOCALEVAL_NETWORK_LOG", os.devnull)
_SWITCHES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK")


def _write(line: str) -> None:
    with open(_LOG, "a", encoding="utf-8") as log:
        log.write(line + "\n")


_host, _, _port = os.environ.get("LOCALEVAL_NETWORK_ALLOW", "").rpartition(":")
_ALLOWED = (_host, int(_port)) if _host and _port.isdigit() else None


def _address(name: str, args: tuple[Any, ...]) -> tuple[str, int] | None:
    """The (host, port) a call is about, where it names one."""
    if name in ("socket.connect", "socket.connect_ex", "create_connection") and args:
        target = args[-1] if name.startswith("socket.") else args[0]
        if isinstance(target, tuple) and len(target) >= 2:
            return str(target[0]), int(target[1])
    if name == "getaddrinfo" and len(args) >= 2 and str(args[1]).isdigit():
        return str(args[0]), int(args[1])
    return None


def _refuse(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        shown = [a for a in args if not isinstance(a, socket.socket)]
        if _ALLOWED is not None and _address(name, args) == _ALLOWED:
            _write(f"allowed {name} {shown!r}")
            return original(*args, **kwargs)
        _write(f"attempt {name} {shown!r}")
        raise OSError(errno.ENETUNREACH, f"network blocked by the offline test ({name})")

    return refuse


for _method in ("connect", "connect_ex", "sendto", "sendmsg"):
    setattr(socket.socket, _method, _refuse(f"socket.{_method}", getattr(socket.socket, _method)))
for _function in (
    "create_connection",
    "getaddrinfo",
    "gethostbyname",
    "gethostbyname_ex",
    "gethostbyaddr",
    "getnameinfo",
):
    setattr(socket, _function, _refuse(_function, getattr(socket, _function)))


@atexit.register
def _record_switches() -> None:
    for name in _SWITCHES:
        _write(f"env {name}={os.environ.get(name, '')}")
