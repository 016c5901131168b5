"""How fast a judge and an embedder work on this machine: measured once, kept in the database.

An estimate (localeval.tools.estimate) turns the work it counted into time with these
figures. A judge is measured the first time it is estimated on a machine: its backend's
`measure` loads it and times a few seconds of real work (for llama.cpp: a batch of prompt
tokens, a few small calls, a short reply; for a server: a few short requests). An
embedder is loaded and given a fixed batch of sentences. The figures are kept in the
`model_speed` table under the model's identity, its settings (threads change the speed
but not the numbers) and the machine, so each is measured once per machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from localeval.backends import embedder_backend, judge_backend
from localeval.config import EmbedderConfig, JudgeConfig
from localeval.database import Database, StoreError
from localeval.embedder import EmbedderSpeed
from localeval.judge import JudgeSpeed, ModelIdentity

#: what an embedder is timed on: sentences of ordinary length, in one batch
_SENTENCES = [
    f"Sentence {n} of the timing batch says what a retrieved chunk of text might say."
    for n in range(64)
]

S = TypeVar("S", JudgeSpeed, EmbedderSpeed)


def machine() -> str:
    """This machine as a speed depends on it: its name, CPU model and cores."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}, {cpu}, {os.cpu_count()} cores"


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
    timer: Callable[[str, Any], JudgeSpeed] | None = getattr(backend, "measure", None)
    if timer is None:
        return None
    return _kept_or_measured(
        connection,
        JudgeSpeed,
        config.name,
        speed_key(identity, config.settings, machine()),
        (lambda: timer(config.name, config.settings)) if measure else None,
    )


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
    with connection.translating("reading the models' speeds"):
        row = connection.execute("SELECT speed FROM model_speed WHERE key = ?", (key,)).fetchone()
    if row is not None:
        try:
            return kind(**json.loads(row[0]))
        except (TypeError, ValueError):
            pass  # kept by another version of localeval: measured again
    if measure is None:
        return None
    speed = measure()
    # a database that cannot be written: measured again next time
    with contextlib.suppress(StoreError):
        connection.execute(
            "INSERT INTO model_speed (key, model, machine, speed) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET model = excluded.model, machine = excluded.machine, "
            "speed = excluded.speed, measured = excluded.measured",
            (key, model, machine(), json.dumps(asdict(speed))),
        )
    return speed
