"""The models a run needs, from their models.toml entries: each one's backend, behind the
cache when there is one, and only those the metrics use."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from localeval.backends import embedder_backend, judge_backend
from localeval.config import EmbedderConfig, JudgeConfig, ModelsConfig
from localeval.embedder import CountingEmbedder, Embedder
from localeval.errors import UsageError
from localeval.judge import Judge
from localeval.metrics import Metric, Tools
from localeval.prompts.sets import prompt_set
from localeval.runs.cache import CachedEmbedder, CachedJudge


def open_judge(
    config: JudgeConfig, cache: sqlite3.Connection | None = None, counting: bool = False
) -> Judge:
    """The judge of an entry. Behind a cache (for a backend whose answers may be cached)
    it is identified now, its files checked, and loaded on the first miss only.
    `counting`: the backend's counter instead (an estimate: what each call would cost)."""
    backend = judge_backend(config.backend)
    load = backend.load
    if counting:
        load = getattr(backend, "counter", None)
        if load is None:
            raise UsageError(f"judge '{config.name}': its backend cannot estimate a run")
    if cache is None or not backend.cacheable:
        return load(config.name, config.settings)
    identity = backend.identify(config.name, config.settings)
    # samples in flight (a server judge's `concurrency`) are the backend's to allow
    concurrency = getattr(config.settings, "concurrency", 1)
    return CachedJudge(identity, lambda: load(config.name, config.settings), cache, concurrency)


def open_embedder(
    config: EmbedderConfig, cache: sqlite3.Connection | None = None, counting: bool = False
) -> Embedder:
    """The embedder of an entry, behind the cache as for `open_judge`. `counting`: a stand-in
    that only counts the texts (an estimate)."""
    backend = embedder_backend(config.backend)
    if (cache is None or not backend.cacheable) and not counting:
        return backend.load(config.name, config.settings)
    identity = backend.identify(config.name, config.settings)

    def load() -> Embedder:
        if counting:
            return CountingEmbedder(identity)
        return backend.load(config.name, config.settings)

    if cache is None or not backend.cacheable:
        return load()
    return CachedEmbedder(identity, load, cache)


def load_tools(
    models: ModelsConfig,
    metrics: Sequence[Metric],
    judge_name: str | None = None,
    embedder_name: str | None = None,
    cache: sqlite3.Connection | None = None,
    counting: bool = False,
) -> Tools:
    """The judge and/or embedder the metrics use (only those), their files checked first;
    `counting`: stand-ins that count what the models would do (localeval.runs.estimate)."""
    tools = Tools()
    if any(m.uses_judge for m in metrics):
        judge_config = models.judge(judge_name)
        tools.verdict_thresholds = dict(judge_config.thresholds)
        tools.calibration = dict(judge_config.calibration)
        tools.prompts = prompt_set(judge_config.prompts)
        tools.judge = open_judge(judge_config, cache, counting)
    if any(m.uses_embedder for m in metrics):
        tools.embedder = open_embedder(models.embedder(embedder_name), cache, counting)
    return tools
