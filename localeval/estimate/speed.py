"""How fast a judge and an embedder work on this machine: measured once, kept for the user.

An estimate (localeval.estimate.counting) turns the work it counted into time with these
figures. A judge is measured the first time it is estimated on a machine: its backend's
`measure` loads it and times a few seconds of real work (for llama.cpp: a batch of prompt
tokens, a few small calls, a short reply; for a server: a few short requests). An
embedder is loaded and given a fixed batch of sentences.

The figures are kept under the model's identity, its settings (threads change the speed
but not the numbers) and the machine as its speed depends on it (`machine`: the CPU, the
cores this process may use, a container's CPU limit, the GPUs; not the host's name, which
is new for every CI job on the same hardware), so each is measured once per machine, not
once per database: in the user's cache folder (`speeds_folder`), one file per figure,
written whole and renamed into place, so two processes measuring at once each leave a
whole file and a reader never sees half of one. Where that folder cannot be written (a
read-only home) they are kept in the run database's `model_speed` table instead, which is
read as well.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from localeval.backends import (
    CountingBackend,
    MeasuringBackend,
    embedder_backend,
    judge_backend,
)
from localeval.backends.model_files import user_cache_folder
from localeval.config import EmbedderConfig, JudgeConfig
from localeval.database import Database, StoreError
from localeval.embedder import EmbedderSpeed
from localeval.judge import JudgeSpeed, ModelIdentity
from localeval.results.model import now

#: what an embedder is timed on: sentences of ordinary length, in one batch
_SENTENCES = [
    f"Sentence {n} of the timing batch says what a retrieved chunk of text might say."
    for n in range(32)
]

S = TypeVar("S", JudgeSpeed, EmbedderSpeed)


def machine() -> str:
    """This machine as a speed depends on it: its CPU model, the cores this process may use
    of all, a container's CPU limit, its NVIDIA GPUs."""
    cpu = _first_field(Path("/proc/cpuinfo"), "model name") or platform.processor()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    parts = [f"{cpu or platform.machine()} ({platform.machine()})"]
    parts.append(f"{usable or os.cpu_count()} of {os.cpu_count()} cores")
    limit = _read(Path("/sys/fs/cgroup/cpu.max")).split()
    if len(limit) == 2 and limit[0] != "max":
        parts.append(f"limited to {int(limit[0]) / int(limit[1]):g} CPUs")
    gpus = sorted(Path("/proc/driver/nvidia/gpus").glob("*/information"))
    parts += [f"GPU {_first_field(gpu, 'Model')}" for gpu in gpus]
    return ", ".join(parts)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _first_field(path: Path, name: str) -> str:
    """The value of the first "name: value" line of a /proc file ("" if none)."""
    for line in _read(path).splitlines():
        if line.startswith(name):
            return line.partition(":")[2].strip()
    return ""


def speeds_folder() -> Path | None:
    """Where this user's measured speeds are kept: <user cache folder>/speeds (None: no home
    folder to keep them in)."""
    base = user_cache_folder()
    return base / "speeds" if base is not None else None


def speed_key(identity: ModelIdentity, settings: Any, where: str) -> str:
    """What a measurement is kept under: the model, all of its entry's settings, the machine."""
    parts = [identity.key, dict(identity.settings), repr(settings), where]
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def judge_speed(
    connection: Database,
    config: JudgeConfig,
    identity: ModelIdentity,
    measure: bool = True,
) -> JudgeSpeed | None:
    """The judge's speed here: kept, else measured now and kept (when `measure`). None when
    its backend cannot measure (a test's stand-in) or it is not kept and not to be measured."""
    backend = judge_backend(config.backend)
    if not isinstance(backend, MeasuringBackend):
        return None
    timer: Callable[[str, Any], JudgeSpeed] = backend.measure
    return _kept_or_measured(
        connection,
        JudgeSpeed,
        config.name,
        speed_key(identity, config.settings, machine()),
        (lambda: timer(config.name, config.settings)) if measure else None,
    )


def judge_speed_kept(connection: Database, config: JudgeConfig) -> bool:
    """Whether the entry's judge can be estimated (`CountingBackend`) and its speed on this
    machine is kept already, so that an estimate needs no measuring."""
    backend = judge_backend(config.backend)
    if not isinstance(backend, CountingBackend):
        return False
    identity = backend.identify(config.name, config.settings)
    return judge_speed(connection, config, identity, measure=False) is not None


def embedder_speed(
    connection: Database,
    config: EmbedderConfig,
    identity: ModelIdentity,
    measure: bool = True,
) -> EmbedderSpeed | None:
    """The embedder's speed here: kept, else measured now (loaded, a batch embedded)."""

    def timed() -> EmbedderSpeed:
        started = time.perf_counter()
        embedder = embedder_backend(config.backend).load(config.name, config.settings)
        embedder.embed(_SENTENCES[:1])  # the first call may set things up
        loaded = time.perf_counter()
        embedder.embed(_SENTENCES)
        embedded = time.perf_counter() - loaded
        return EmbedderSpeed(len(_SENTENCES) / max(embedded, 1e-6), loaded - started)

    return _kept_or_measured(
        connection,
        EmbedderSpeed,
        config.name,
        speed_key(identity, config.settings, machine()),
        timed if measure else None,
    )


def _kept_or_measured(
    connection: Database,
    kind: type[S],
    model: str,
    key: str,
    measure: Callable[[], S] | None,
) -> S | None:
    kept = [_kept_in_folder(key)]
    with connection.translating("reading the models' speeds"):
        row = connection.execute("SELECT speed FROM model_speed WHERE key = ?", (key,)).fetchone()
    if row is not None:
        kept.append(row[0])
    for text in kept:
        try:
            return kind(**json.loads(text))
        except (TypeError, ValueError):
            pass  # none, or kept by another version of localeval: measured again
    if measure is None:
        return None
    speed = measure()
    if _keep_in_folder(key, model, asdict(speed)):
        return speed
    # no folder of the user's to keep it in: the database, if it can be written (else it is
    # measured again next time)
    with contextlib.suppress(StoreError):
        connection.execute(
            "INSERT INTO model_speed (key, model, machine, speed) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET model = excluded.model, machine = excluded.machine, "
            "speed = excluded.speed, measured = excluded.measured",
            (key, model, machine(), json.dumps(asdict(speed))),
        )
    return speed


def _kept_in_folder(key: str) -> str | None:
    """The speed kept in the user's folder under this key, as JSON (None: none kept)."""
    folder = speeds_folder()
    if folder is None:
        return None
    try:
        kept = json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return json.dumps(kept.get("speed")) if isinstance(kept, dict) else None


def _keep_in_folder(key: str, model: str, speed: dict[str, Any]) -> bool:
    """Keep a measurement in the user's folder: whether it could be written there."""
    folder = speeds_folder()
    if folder is None:
        return False
    record = {
        "model": model,
        "machine": machine(),
        "host": platform.node(),
        "measured": now(),
        "speed": speed,
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{key}.", suffix=".tmp")
    except OSError:
        return False
    # written whole under a name of its own, then renamed over the figure's file
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(record, out, indent=1)
        os.replace(temporary, folder / f"{key}.json")
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True
