"""Loaded at interpreter start when this folder is on PYTHONPATH (tests/test_offline.py):
every socket connection and every name lookup fails, and each attempt is written to
$LOCALEVAL_NETWORK_LOG, so that a test can assert that none was even tried.

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


def _refuse(name: str) -> Callable[..., Any]:
    def refuse(*args: Any, **_kwargs: Any) -> Any:
        shown = [a for a in args if not isinstance(a, socket.socket)]
        _write(f"attempt {name} {shown!r}")
        raise OSError(errno.ENETUNREACH, f"network blocked by the offline test ({name})")

    return refuse


for _method in ("connect", "connect_ex", "sendto", "sendmsg"):
    setattr(socket.socket, _method, _refuse(f"socket.{_method}"))
for _function in (
    "create_connection",
    "getaddrinfo",
    "gethostbyname",
    "gethostbyname_ex",
    "gethostbyaddr",
    "getnameinfo",
):
    setattr(socket, _function, _refuse(_function))


@atexit.register
def _record_switches() -> None:
    for name in _SWITCHES:
        _write(f"env {name}={os.environ.get(name, '')}")
