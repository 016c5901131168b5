"""Model access: the judge and embedder a piece of work needs, from their models.toml
entries, each behind the judge/embedding cache when there is one, and only those its
metrics use.

`load_tools` opens the models into a `Tools` (the type every metric takes, so it is
defined with the metric's terms, localeval.metrics.base, below this package), whose judge
settings (thresholds, calibration, prompt set) `tools_for` fills in one place;
`cached_tools` does the same around a cache connection that it opens and closes. The
cache itself is localeval.tools.cache; its tables live in the store (localeval.database)
beside the run history, and the cache needs nothing of the history, so that
`compare-answers`, `calibrate`, `generate` and the Python API use models without touching
the run history.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

from localeval.backends import (
    ConcurrentSettings,
    CountingBackend,
    embedder_backend,
    judge_backend,
)
from localeval.backends.fake import HashEmbedder
from localeval.config import EmbedderConfig, JudgeConfig, ModelsConfig
from localeval.database import Database, Location
from localeval.embedder import CountingEmbedder, Embedder
from localeval.errors import UsageError
from localeval.judge import Judge, ModelIdentity
from localeval.metrics import Metric, Tools
from localeval.prompts.sets import prompt_set
from localeval.tools.cache import (
    CachedEmbedder,
    CachedJudge,
    CacheTables,
    cache_connection,
    cache_tables,
)

#: the cache a model is put behind: a database's cache tables (or an estimate's view of them)
Cache = Database | CacheTables

Model = TypeVar("Model")


class ModelPool:
    """Models loaded once per process (the Python API's): each by its backend and its
    entry's settings, so a later run with the same entry reuses the model already in
    memory, behind that run's own cache (which, as ever, loads it on its first miss)."""

    def __init__(self) -> None:
        self._models: dict[tuple[object, ...], Any] = {}
        self._loading = threading.Lock()

    def loader(
        self, kind: str, backend: object, load: Callable[[str, Any], Model]
    ) -> Callable[[str, Any], Model]:
        """`load(name, settings)`, answered from the pool for settings loaded before."""

        def pooled(name: str, settings: Any) -> Model:
            key = (kind, id(backend), name, settings)
            with self._loading:
                held = self._models.get(key)
                # the backend object itself is kept and compared: a test registers new ones
                if held is None or held[0] is not backend:
                    held = self._models[key] = (backend, load(name, settings))
            model: Model = held[1]
            return model

        return pooled

    def clear(self) -> None:
        """Let go of every model (they are freed once no run holds them)."""
        with self._loading:
            self._models.clear()


def open_judge(
    config: JudgeConfig,
    cache: Cache | None = None,
    counting: bool = False,
    pool: ModelPool | None = None,
) -> Judge:
    """The judge of an entry. Behind a cache (for a backend whose answers may be cached)
    it is identified now, its files checked, and loaded on the first miss only.
    `counting`: the backend's counter instead (an estimate: what each call would cost);
    `pool`: the judge loaded once per process there."""
    backend = judge_backend(config.backend)
    load = backend.load if pool is None else pool.loader("judge", backend, backend.load)
    if counting:
        if not isinstance(backend, CountingBackend):
            raise UsageError(f"judge '{config.name}': its backend cannot estimate a run")
        load = backend.counter
    if cache is None or not backend.cacheable:
        return load(config.name, config.settings)
    identity = backend.identify(config.name, config.settings)
    # samples in flight (a server judge's `concurrency`) are the backend's to allow
    settings = config.settings
    concurrency = settings.concurrency if isinstance(settings, ConcurrentSettings) else 1
    return CachedJudge(identity, lambda: load(config.name, config.settings), cache, concurrency)


def open_embedder(
    config: EmbedderConfig,
    cache: Cache | None = None,
    counting: bool = False,
    pool: ModelPool | None = None,
) -> Embedder:
    """The embedder of an entry, behind the cache as for `open_judge`. `counting`: a stand-in
    that only counts the texts (an estimate); `pool`: the model loaded once per process."""
    backend = embedder_backend(config.backend)
    load_model = backend.load if pool is None else pool.loader("embedder", backend, backend.load)
    if (cache is None or not backend.cacheable) and not counting:
        return load_model(config.name, config.settings)
    identity = backend.identify(config.name, config.settings)

    def load() -> Embedder:
        if counting:
            # words hashed: texts that share words are alike, as with the real embedder; as
            # long as the vectors the cache holds, which a sample may get beside these
            return CountingEmbedder(identity, HashEmbedder(_cached_dimensions(cache, identity)))
        return load_model(config.name, config.settings)

    if cache is None or not backend.cacheable:
        return load()
    return CachedEmbedder(identity, load, cache)


def _cached_dimensions(cache: Cache | None, identity: ModelIdentity, otherwise: int = 256) -> int:
    """How long the vectors are that the cache holds for this embedder (`otherwise` when it
    holds none): a counting stand-in's must match them."""
    if cache is None:
        return otherwise
    found = cache_tables(cache).dimensions(identity.key)
    return otherwise if found is None else found


def tools_for(
    judge_config: JudgeConfig | None,
    judge: Judge | None = None,
    embedder: Embedder | None = None,
) -> Tools:
    """The Tools of an opened judge and embedder: the judge's gate thresholds, calibration
    maps and prompt set from its entry (without an entry, a judge is asked with the default
    set and its verdicts are its raw probabilities)."""
    if judge_config is None:
        return Tools(judge=judge, embedder=embedder)
    return Tools(
        judge=judge,
        embedder=embedder,
        verdict_thresholds=dict(judge_config.thresholds),
        calibration=dict(judge_config.calibration),
        prompts=prompt_set(judge_config.prompts),
    )


def load_tools(
    models: ModelsConfig,
    metrics: Sequence[Metric],
    judge_name: str | None = None,
    embedder_name: str | None = None,
    cache: Cache | None = None,
    counting: bool = False,
    pool: ModelPool | None = None,
) -> Tools:
    """The judge and/or embedder the metrics use (only those), their files checked first;
    behind the cache on `cache` (whose connection the caller keeps open while they are used,
    and closes). `counting`: stand-ins that count what the models would do
    (localeval.estimate.counting); `pool`: models kept loaded there for the process."""
    judge_config = models.judge(judge_name) if any(m.uses_judge for m in metrics) else None
    judge = None
    if judge_config is not None:
        judge = open_judge(judge_config, cache, counting, pool)
    embedder = None
    if any(m.uses_embedder for m in metrics):
        embedder = open_embedder(models.embedder(embedder_name), cache, counting, pool)
    return tools_for(judge_config, judge, embedder)


@contextmanager
def cached_tools(
    models: ModelsConfig,
    metrics: Sequence[Metric],
    judge_name: str | None = None,
    embedder_name: str | None = None,
    use_cache: bool = True,
    db: Location | None = None,
) -> Iterator[Tools]:
    """`load_tools` behind the cache of the database `db` (default: default_db_path()),
    whose connection is open for the block and closed after it; without `use_cache` the
    models are asked afresh and no database is opened."""
    with ExitStack() as opened:
        cache = opened.enter_context(cache_connection(db)) if use_cache else None
        yield load_tools(models, metrics, judge_name, embedder_name, cache)
