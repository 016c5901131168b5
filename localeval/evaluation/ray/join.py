"""Joining a Ray cluster for `evaluate --ray` (localeval.evaluation.ray.driver scores on it): the
address checked first, within a time-out, for a Ray head that answers (Ray itself waits
minutes on an address that is not one), this process's signal handlers kept as they were
(ray.init puts its own on SIGTERM), and the plan of actors that fill the cluster's nodes.

Ray is imported only here, only when a run asks for it.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType

from localeval.errors import UsageError, param
from localeval.evaluation.requests import ClusterPlan, RaySettings

#: seconds a cluster's head has to answer the first handshake before the run is refused
JOIN_TIMEOUT_S = 10.0
#: HTTP/2's client preface and an empty SETTINGS frame, which a gRPC server answers with a
#: SETTINGS frame (type 4) of its own
HTTP2_OPENING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
SETTINGS_FRAME = 4


def import_ray() -> ModuleType:
    """Ray, or a one-line UsageError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(
            f"{param('ray')} needs Ray, which is not installed here: pip install 'localeval[ray]'"
        ) from None
    return ray


def resolved_address(address: str | None) -> str | None:
    """The cluster to join: the address given, else RAY_ADDRESS's (None: start one here)."""
    if address in (None, "", "auto"):
        return os.environ.get("RAY_ADDRESS") or None
    return address


def check_reachable(address: str, timeout: float | None = None) -> None:
    """UsageError unless a Ray cluster's head answers at the address within `timeout`
    seconds (JOIN_TIMEOUT_S): Ray itself, given a port where something else listens (a
    database), retries for more than ten minutes, and one where nothing listens it waits
    on before it says so. The head's GCS speaks gRPC: to HTTP/2's opening it answers with
    a SETTINGS frame, which is all this checks."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"{param('ray')} {address}: give the cluster's HOST:PORT")
    seconds = JOIN_TIMEOUT_S if timeout is None else timeout
    try:
        connection = socket.create_connection((host.strip("[]"), int(port)), timeout=seconds)
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise UsageError(f"cannot reach the Ray cluster at {address}: {reason}") from None
    with connection:
        try:
            connection.sendall(HTTP2_OPENING)
            answer = _received(connection, 9, time.monotonic() + seconds)
        except TimeoutError:
            why = f"it did not answer Ray's handshake within {seconds:g} s"
            raise UsageError(_not_a_head(address, why)) from None
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise UsageError(
                _not_a_head(address, f"it broke off the handshake: {reason}")
            ) from None
    if len(answer) < 9 or answer[3] != SETTINGS_FRAME:
        raise UsageError(_not_a_head(address, "it does not answer as Ray's gRPC services do"))


def _not_a_head(address: str, why: str) -> str:
    return (
        f"cannot join the Ray cluster at {address}: what listens there is not a Ray "
        f"cluster's head ({why}); give the address `ray start --head` printed (port 6379 "
        "unless set otherwise)"
    )


def refuse_client(address: str, given: str | None) -> None:
    """UsageError for a Ray Client address (ray://): its server on the head forks a process
    per client, which dies at random in the gRPC of Ray 2.60 (ray-project/ray#63202; one
    join of three failed here), and a run on it would be a run that may not start."""
    if not address.startswith("ray://"):
        return
    named = (
        f"{param('ray')} {address}" if given not in (None, "", "auto") else f"RAY_ADDRESS={address}"
    )
    raise UsageError(
        f"{named}: Ray Client (ray://) is not supported; give the head's HOST:PORT (the "
        "nodes must reach this machine), or run localeval on the cluster with `ray job "
        "submit` (docs/scale.md)"
    )


def _received(connection: socket.socket, size: int, deadline: float) -> bytes:
    """Up to `size` bytes (fewer where the other end closes), by the deadline
    (TimeoutError after it)."""
    data = b""
    while len(data) < size:
        connection.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = connection.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


@contextmanager
def signal_handlers_kept() -> Iterator[None]:
    """The process's SIGTERM and SIGINT handlers as they were before the block: ray.init
    puts its own on SIGTERM (an exit with another status than the caller's handler would
    give, after a stack dump of Ray's C++ core), which would stop a run otherwise than
    Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread has handlers, and Ray sets none from another
        return
    kept = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in kept.items():
            if handler is not None:  # None: one installed outside Python, left as it is
                signal.signal(number, handler)


class Connection:
    """This process joined to a Ray cluster (or one started here) for a piece of work; a
    cluster started here stops at `close()`, one joined is only left."""

    def __init__(self, settings: RaySettings):
        self.ray = import_ray()
        address = resolved_address(settings.address)
        #: "" for a cluster started here
        self.address = address or ""
        self.joined = False
        if self.ray.is_initialized():
            return  # this process is a driver already (a Python caller's ray.init)
        if address not in (None, "local", "auto"):  # "auto": RAY_ADDRESS said so; Ray finds it
            refuse_client(address, settings.address)
            check_reachable(address)
        quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
        try:
            with signal_handlers_kept():
                if address is None or address == "local":
                    self.ray.init(address="local", include_dashboard=False, **quiet)
                else:
                    self.ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError, TimeoutError, ValueError, SystemExit) as exc:
            if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM:
                # SIGTERM in the join, taken by ray.init's handler: given to this process's
                signal.raise_signal(signal.SIGTERM)
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(
                f"cannot join the Ray cluster at {self.address or 'here'}: {reason} (where "
                "the cluster uses token authentication, set RAY_AUTH_MODE=token and its "
                "RAY_AUTH_TOKEN)"
            ) from None
        self.joined = True

    def plan(self, settings: RaySettings, need_bytes: int = 0) -> ClusterPlan:
        """How many actors of how many threads fill the cluster's nodes (each node's CPUs,
        and its memory when the models' size is known), or those the settings ask for."""
        nodes = [n["Resources"] for n in self.ray.nodes() if n.get("Alive")]
        cpus = [int(n.get("CPU", 0)) for n in nodes]
        if not cpus or max(cpus) < 1:
            raise UsageError(f"the Ray cluster at {self.address or 'here'} has no CPUs to score on")
        threads = settings.threads or default_threads(cpus)
        if threads > max(cpus):
            raise UsageError(
                f"{param('ray_threads')} {threads}: no node of the cluster has that many CPUs "
                f"(the largest has {max(cpus)})"
            )
        fits = 0
        for node, node_cpus in zip(nodes, cpus, strict=True):
            by_memory = int(node.get("memory", 0) // need_bytes) if need_bytes else node_cpus
            fits += min(node_cpus // threads, by_memory)
        actors = settings.actors or max(1, fits)
        return ClusterPlan(self.address, actors, threads, len(nodes), sum(cpus))

    def close(self) -> None:
        if self.joined:
            self.ray.shutdown()
            self.joined = False


def default_threads(cpus: Sequence[int]) -> int:
    """Each actor's threads when not given: one (many one-thread actors score more samples
    an hour than fewer with several threads: docs/scale.md), on the cluster's CPUs."""
    return 1
