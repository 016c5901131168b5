"""The models, the state cache and the install: `localeval models`, `cache` and `doctor`
as calls.

    import localeval

    listed = localeval.list_models()          # models.toml's judges and embedders, checked
    [m.name for m in listed.problems]         # the entries whose files are missing or wrong
    localeval.check_models()                  # the same, raising ModelFileError on a problem
    cache = localeval.StateCache()            # the cache of the default run history
    cache.stats(), cache.clear()
    localeval.check_install().ok              # whether this install can evaluate here

Nothing here prints or loads a model (check_install() excepted: it proves the llama.cpp build and
loads the embedder, as `localeval doctor` does); looking at the cache creates no database.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from localeval.api.history import DEFAULT_DB, DefaultDb, history_location
from localeval.backends import embedder_backend, judge_backend
from localeval.backends.llama_states import StoreStats, clear_store, store_stats
from localeval.config import JudgeConfig, ModelsConfig, load_models_config
from localeval.database import Location, default_db_path
from localeval.doctor import Check, Diagnosis, diagnose
from localeval.errors import ModelFileError
from localeval.tools.cache import (
    CacheStats,
    cache_connection,
    cache_file_missing,
    cache_stats,
    clear_cache,
)

#: a models.toml given in code: a path (None: found as the command line finds it)
ModelsFile = str | os.PathLike[str] | None
#: a run history given in code: a file, a postgresql:// URL, or the default one
Db = str | os.PathLike[str] | Location | DefaultDb | None


@dataclass(frozen=True)
class Model:
    """One entry of models.toml and whether it is there and usable (`problem` None)."""

    kind: str  # "judge" or "embedder"
    name: str
    backend: str
    default: bool
    #: what is wrong with it (a missing file, a sha256 that does not match), None if usable
    problem: str | None
    #: where the model is (a file, a URL, "(no file)")
    location: str
    #: how it runs, in a few words
    note: str
    #: a judge's prompt set, the kinds of verdict it is calibrated for, the other names
    #: models.toml gives it ([judge_aliases]) and its gates on its own scale
    prompts: str | None = None
    calibrated: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    thresholds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class ModelList:
    """The models of one models.toml (`source`), in its order."""

    source: Path
    judges: tuple[Model, ...]
    embedders: tuple[Model, ...]

    @property
    def problems(self) -> list[Model]:
        """The entries that cannot be used as they are."""
        return [model for model in (*self.judges, *self.embedders) if not model.ok]

    @property
    def ok(self) -> bool:
        return not self.problems


def list_models(path: ModelsFile = None) -> ModelList:
    """The judges and embedders of models.toml (`path`, else found as the command line
    finds it: $LOCALEVAL_MODELS, ./models.toml, the project's) and whether each one's
    files are there and match their sha256, as `localeval models` lists them. Loads no
    model; ConfigError for a models.toml that cannot be read."""
    config = load_models_config(None if path is None else os.fspath(path))
    judges = tuple(_judge(config, name, judge) for name, judge in config.judges.items())
    embedders = []
    for name, embedder in config.embedders.items():
        found = embedder_backend(embedder.backend).status(embedder.settings)
        default = name == config.default_embedder
        embedders.append(
            Model(
                "embedder", name, embedder.backend, default, found.problem, found.location,
                found.note,
            )
        )  # fmt: skip
    return ModelList(config.source, judges, tuple(embedders))


def _judge(config: ModelsConfig, name: str, judge: JudgeConfig) -> Model:
    found = judge_backend(judge.backend).status(judge.settings)
    aliases = sorted(alias for alias, target in config.judge_aliases.items() if target == name)
    return Model(
        "judge",
        name,
        judge.backend,
        name == config.default_judge,
        found.problem,
        found.location,
        found.note,
        prompts=judge.prompts,
        calibrated=tuple(sorted(judge.calibration)),
        aliases=tuple(aliases),
        thresholds=dict(judge.thresholds),
    )


def check_models(path: ModelsFile = None) -> ModelList:
    """list_models(path), raising ModelFileError when any entry cannot be used (its message
    names each such entry and what is wrong)."""
    listed = list_models(path)
    if listed.problems:
        wrong = "; ".join(f"{m.kind} {m.name}: {m.problem}" for m in listed.problems)
        raise ModelFileError(f"models of {listed.source} that cannot be used: {wrong}")
    return listed


def _db(db: Db) -> Location:
    """A db argument as the run history's location, the default one for None."""
    location = None if db is None else history_location(db)
    return location if location is not None else default_db_path()


@dataclass(frozen=True)
class CacheReport:
    """What the caches hold: the judge calls and embeddings of the run history's database
    (`cache` None where that database does not exist yet) and the llama.cpp judge's
    context states in the user's cache folder."""

    db: Location
    cache: CacheStats | None
    states: StoreStats

    def lines(self) -> list[str]:
        """The report as `localeval cache stats` prints it."""
        lines = [f"database: {self.db}"]
        if self.cache is not None:
            lines += self.cache.lines()
        else:
            lines.append("nothing cached: the database does not exist yet")
        return [*lines, *self.states.lines()]


@dataclass(frozen=True)
class Cleared:
    """How many cached judge calls, embeddings and context states were deleted."""

    judge_calls: int
    embeddings: int
    states: int


class StateCache:
    """The caches of a run history's database (judge calls, embeddings) and the llama.cpp
    judge's context states: what `localeval cache` looks at and clears. `db`: a file or a
    postgresql:// URL (default: $LOCALEVAL_DB, else .localeval/localeval.db). Opens the
    database for each call only; never creates one just to look or clear."""

    def __init__(self, db: Db = DEFAULT_DB) -> None:
        self.db = _db(db)

    def stats(self) -> CacheReport:
        """How much each cache holds (`.lines()`: as the command prints it)."""
        found = None
        if not cache_file_missing(self.db):
            with cache_connection(self.db, readonly=True) as connection:
                found = cache_stats(connection)
        return CacheReport(self.db, found, store_stats())

    def clear(self) -> Cleared:
        """Delete every cached judge call, embedding and context state; the run history
        itself is kept."""
        judged = embedded = 0
        if not cache_file_missing(self.db):  # none made: nothing to clear
            with cache_connection(self.db) as connection:
                judged, embedded = clear_cache(connection)
        return Cleared(judged, embedded, clear_store())

    def __repr__(self) -> str:
        return f"<StateCache {self.db}>"


def check_install(models: ModelsFile = None, db: Db = DEFAULT_DB) -> Diagnosis:
    """Whether this install can evaluate here with no network, as `localeval doctor`
    checks it: `.checks` (each `name`, `ok`, `found`, `remedy`), `.ok`, `.failed`. Creates
    nothing; what it finds is in the Diagnosis, never raised."""
    location = None if db is None else history_location(db)
    return diagnose(models, location)


__all__ = [
    "CacheReport",
    "Check",
    "Cleared",
    "Diagnosis",
    "Location",
    "Model",
    "ModelList",
    "StateCache",
    "check_install",
    "check_models",
    "list_models",
]
