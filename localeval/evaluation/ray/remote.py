"""Models split between a driver and its workers, for scoring on a cluster
(localeval.evaluation.ray.driver): the driver answers what it can from its cache and sends out only
the samples the cache lacks; a worker scores them with models of its own and hands back
what it added to the cache, for the driver to store. Workers never open the store.

* `DriverTools`: the driver's models answer from the cache alone. The first call the cache
  cannot answer raises `CacheMiss`; what the cache did answer for the sample until then
  (`Found`) goes out with it, so that the worker does not ask it again. A model whose
  answers are never cached (a fake) misses at its first call: every sample goes out.
* `WorkerTools`: a worker's models, loaded once, behind a cache in memory that holds the
  sample's forwarded answers and keeps what the models add (`entries`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from localeval.backends import embedder_backend, judge_backend
from localeval.config import ModelsConfig
from localeval.database import Database
from localeval.errors import ModelFileError
from localeval.judge import ModelIdentity, Prompt, Usage
from localeval.metrics import Metric, Tools
from localeval.schema import Schema
from localeval.tools import tools_for
from localeval.tools.cache import (
    CachedEmbedder,
    CachedJudge,
    CacheTables,
    JudgeEntry,
    VectorEntry,
    keep_judge_entry,
    keep_vector_entry,
)

Entry = JudgeEntry | VectorEntry


@dataclass
class Found:
    """What the driver's cache answered for one sample: judge answers (JSON text) and
    vectors (float32 bytes), by cache key."""

    answers: dict[str, str] = field(default_factory=dict)
    vectors: dict[str, bytes] = field(default_factory=dict)


class CacheMiss(BaseException):
    """A call the driver's cache cannot answer: the sample is scored on a worker. A
    BaseException, as GeneratorExit is, so that no metric's `except Exception` (a
    plugin's) takes it for a failure of its own."""


def _miss() -> NoReturn:
    raise CacheMiss()


class CacheOnlyJudge(CachedJudge):
    """The driver's judge: cached answers only, each one noted in `found`."""

    def __init__(self, identity: ModelIdentity, cache: Database | CacheTables):
        super().__init__(identity, _miss, cache)
        self.found: dict[str, str] = {}

    def _answer(self, key: str) -> str | None:
        value = super()._answer(key)
        if value is not None:
            self.found[key] = value
        return value


class CacheOnlyEmbedder(CachedEmbedder):
    """The driver's embedder: cached vectors only, each one noted in `found`."""

    def __init__(self, identity: ModelIdentity, cache: Database | CacheTables):
        super().__init__(identity, _miss, cache)
        self.found: dict[str, bytes] = {}

    def _vector(self, key: str) -> bytes | None:
        value = super()._vector(key)
        if value is not None:
            self.found[key] = value
        return value


class Absent:
    """The driver's stand-in for a model whose answers are never cached: its identity (for
    the run's record), and a miss at any call."""

    def __init__(self, identity: ModelIdentity):
        self.identity = identity
        self.name = identity.name
        self.usage = Usage()

    def yes_probability(self, prompt: Prompt) -> float:
        raise CacheMiss()

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        raise CacheMiss()

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        raise CacheMiss()

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        raise CacheMiss()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise CacheMiss()


@dataclass(frozen=True)
class Chosen:
    """The judge and embedder a piece of work uses, by models.toml entry name (None: no
    metric of it uses one)."""

    judge: str | None
    embedder: str | None

    @classmethod
    def of(
        cls,
        models: ModelsConfig,
        metrics: Sequence[Metric],
        judge: str | None,
        embedder: str | None,
    ) -> Chosen:
        return cls(
            models.judge(judge).name if any(m.uses_judge for m in metrics) else None,
            models.embedder(embedder).name if any(m.uses_embedder for m in metrics) else None,
        )


class DriverTools:
    """The driver's tools: identities checked against the files here, answers from the cache
    `cache` (None: no cache, every sample goes out); `taken()` after each sample."""

    def __init__(self, models: ModelsConfig, chosen: Chosen, cache: Database | None):
        judge = embedder = None
        judge_config = models.judge(chosen.judge) if chosen.judge is not None else None
        if judge_config is not None:
            backend = judge_backend(judge_config.backend)
            identity = backend.identify(judge_config.name, judge_config.settings)
            cached = cache is not None and backend.cacheable
            judge = CacheOnlyJudge(identity, cache) if cached else Absent(identity)
        if chosen.embedder is not None:
            config = models.embedder(chosen.embedder)
            backend = embedder_backend(config.backend)
            identity = backend.identify(config.name, config.settings)
            cached = cache is not None and backend.cacheable
            embedder = CacheOnlyEmbedder(identity, cache) if cached else Absent(identity)
        self.tools = tools_for(judge_config, judge, embedder)  # type: ignore[arg-type]

    def identities(self) -> dict[str, dict[str, Any]]:
        """The records of the models, which each worker's must equal."""
        return identities(self.tools)

    def taken(self) -> Found:
        """What the cache answered since the last call."""
        found = Found()
        if isinstance(self.tools.judge, CacheOnlyJudge):
            found.answers, self.tools.judge.found = self.tools.judge.found, {}
        if isinstance(self.tools.embedder, CacheOnlyEmbedder):
            found.vectors, self.tools.embedder.found = self.tools.embedder.found, {}
        return found


def identities(tools: Tools) -> dict[str, dict[str, Any]]:
    """Each model's record (name, file sha256, settings), by role."""
    found = {}
    for role, model in (("judge", tools.judge), ("embedder", tools.embedder)):
        if model is not None:
            found[role] = model.identity.record()
    return found


class InMemory:
    """A worker's cache of one sample, for a model behind it: what the driver's cache
    answered (`known`, by key) and the entries the model added since (`added`)."""

    def begin(self, known: Mapping[str, Any]) -> None:
        self.known: dict[str, Any] = dict(known)
        self.added: list[Entry] = []

    def _recall(self, key: str) -> Any:
        return self.known.get(key)

    def _keep(self, entry: Any) -> None:
        self.known[entry.key] = entry.value if isinstance(entry, JudgeEntry) else entry.vector
        self.added.append(entry)


class MemoryJudge(InMemory, CachedJudge):
    """A worker's loaded judge behind a cache in memory."""

    def __init__(self, identity: ModelIdentity, judge: Any):
        super().__init__(identity, lambda: judge, None)
        self.begin({})

    _answer = InMemory._recall


class MemoryEmbedder(InMemory, CachedEmbedder):
    """A worker's loaded embedder behind a cache in memory."""

    def __init__(self, identity: ModelIdentity, embedder: Any):
        super().__init__(identity, lambda: embedder, None)
        self.begin({})

    _vector = InMemory._recall


def with_threads(settings: Any, threads: int) -> Any:
    """A backend's settings with its CPU threads set (those that have a `threads`)."""
    if dataclasses.is_dataclass(settings) and any(
        f.name == "threads" for f in dataclasses.fields(settings)
    ):
        return dataclasses.replace(settings, threads=threads)  # type: ignore[type-var]
    return settings


class WorkerTools:
    """A worker's models, loaded once with `threads` CPU threads each after checking that
    they are the driver's (`expected`: its identity records; ModelFileError naming the
    difference); behind a cache in memory when the driver has a cache (`cached`)."""

    def __init__(
        self,
        models: ModelsConfig,
        chosen: Chosen,
        threads: int,
        cached: bool,
        expected: Mapping[str, Mapping[str, Any]],
        where: str,
    ):
        judge = embedder = None
        judge_config = models.judge(chosen.judge) if chosen.judge is not None else None
        if judge_config is not None:
            backend = judge_backend(judge_config.backend)
            settings = with_threads(judge_config.settings, threads)
            identity = backend.identify(judge_config.name, settings)
            _check("judge", identity, expected, where)
            loaded = backend.load(judge_config.name, settings)
            judge = MemoryJudge(identity, loaded) if cached and backend.cacheable else loaded
        if chosen.embedder is not None:
            config = models.embedder(chosen.embedder)
            backend = embedder_backend(config.backend)
            identity = backend.identify(config.name, config.settings)
            _check("embedder", identity, expected, where)
            loaded = backend.load(config.name, config.settings)
            embedder = MemoryEmbedder(identity, loaded) if cached and backend.cacheable else loaded
        self.tools = tools_for(judge_config, judge, embedder)

    def begin(self, found: Found) -> None:
        """A new sample, with what the driver's cache answered for it."""
        judge, embedder = self.tools.judge, self.tools.embedder
        if isinstance(judge, MemoryJudge):
            judge.begin(found.answers)
        if isinstance(embedder, MemoryEmbedder):
            embedder.begin(found.vectors)

    def entries(self) -> list[Entry]:
        """What the models added to the cache for the sample."""
        added: list[Entry] = []
        for model in (self.tools.judge, self.tools.embedder):
            if isinstance(model, InMemory):
                added.extend(model.added)
        return added


def _check(
    role: str, identity: ModelIdentity, expected: Mapping[str, Mapping[str, Any]], where: str
) -> None:
    """ModelFileError unless this worker's model is the driver's."""
    theirs = dict(expected.get(role, {}))
    ours = identity.record()
    if ours == theirs:
        return
    if ours.get("sha256") != theirs.get("sha256"):
        raise ModelFileError(
            f"{role} '{identity.name}' on {where} has sha256 {ours.get('sha256')}, the "
            f"driver's {theirs.get('sha256')}: a run never mixes models; give every node the "
            "same file at the path models.toml names"
        )
    raise ModelFileError(
        f"{role} '{identity.name}' on {where} is not the driver's ({ours} against {theirs}): "
        "a run never mixes models"
    )


def keep_entries(db: Database, entries: Sequence[Entry]) -> None:
    """Store cache entries a worker made, in one transaction (holding the write lock from
    its start on an SQLite file)."""
    if not entries:
        return
    with db.transaction("storing the cache entries of a worker") as writing:
        for entry in entries:
            if isinstance(entry, JudgeEntry):
                keep_judge_entry(writing, entry)
            else:
                keep_vector_entry(writing, entry)
