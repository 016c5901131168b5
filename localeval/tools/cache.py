"""Never ask twice: a persistent cache of judge calls and embeddings in the store (an SQLite
file, or a team's PostgreSQL database, where every machine reuses every other's answers).

A judge call is keyed by the judge's identity (its file's sha256, or what a backend
without a file names the model by), the settings that can change its numbers, the kind
of call and everything in the prompt (system message, each segment, reply prefix) and the
schema or options. An embedding is keyed by the embedder's identity and the text.
Re-running an unchanged evaluation therefore makes no judge call at all, and changing one
sample or one prompt re-judges only what changed.

The models behind the cache are loaded lazily, on the first miss: a fully cached re-run
never pays for loading them.

With samples in flight (a server judge), each sample asks through a session of the cached
judge, from a thread of its own; a connection belongs to the thread that made it, so each
thread reads and writes the cache through a connection of its own to the same database
(`CacheTables`). An answer is stored once, by one statement: of two machines that ask the
same question at once, the first to store it wins and the second's identical answer is
dropped (`ON CONFLICT DO NOTHING`), and no reader sees a row half-written.

The cache's tables are in the run database (localeval.database); `cache_connection` opens
it for a block of work and closes it after.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.database import Database, Location, open_store, store_file
from localeval.embedder import Embedder
from localeval.judge import (
    CancellableJudge,
    Judge,
    JudgeWithSessions,
    ModelIdentity,
    Prompt,
    RestoringJudge,
    Usage,
    restored_tokens,
)
from localeval.schema import Schema, to_gbnf
from localeval.text import counted
from localeval.tools.cache_entries import (
    CacheTables,
    JudgeEntry,
    VectorEntry,
    cache_tables,
    cached_vector,
    judge_answer,
    keep_judge_entry,
    keep_vector_entry,
    tables_of,
)

__all__ = [
    "CacheTables",
    "CachedEmbedder",
    "CachedJudge",
    "JudgeEntry",
    "VectorEntry",
    "cache_tables",
    "cached_vector",
    "judge_answer",
    "keep_judge_entry",
    "keep_vector_entry",
]


@contextmanager
def cache_connection(db: Location | None = None, readonly: bool = False) -> Iterator[Database]:
    """The database `db` (default: default_db_path()) open for the block, closed after it
    however the block ends (a sqlite3 connection's own `with` commits but never closes).
    `readonly` as for `open_store`."""
    with open_store(db, readonly) as connection:
        yield connection


def _digest(parts: Sequence[Any]) -> str:
    text = json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _prompt_parts(prompt: Prompt) -> list[Any]:
    return [prompt.system, list(prompt.segments), prompt.reply_prefix]


class CachedJudge:
    """A Judge that answers from the cache when it can and asks the real judge otherwise.

    `load` builds the real judge; it is called at most once, on the first cache miss. The
    identity's settings (what besides the model can change its numbers) are part of every
    key. `concurrency` is the real judge's (it need not be loaded to say it); `session()`
    gives a cached judge for one sample in flight.
    """

    def __init__(
        self,
        identity: ModelIdentity,
        load: Callable[[], Judge],
        cache: Database | CacheTables | None,
        concurrency: int = 1,
    ):
        self.identity = identity
        self.name = identity.name
        self.usage = Usage()
        self.concurrency = concurrency
        self._load = load
        self._inner: Judge | None = None
        self._tables = cache_tables(cache)
        self._loading = threading.Lock()
        self._parent: CachedJudge | None = None

    @property
    def loaded(self) -> bool:
        return self._inner is not None

    @property
    def inner(self) -> Judge | None:
        """The real judge, once a miss has loaded it."""
        return self._inner

    def _judge(self) -> Judge:
        with self._loading:  # sessions of samples in flight may miss at the same moment
            if self._inner is None:
                if self._parent is not None:
                    self._inner = _session_of(self._parent._judge())
                else:
                    self._inner = self._load()
                self._inner.usage = self.usage  # one set of counters for the run (or sample)
        return self._inner

    def session(self) -> CachedJudge:
        """A cached judge for one sample: its own counter, a session of the real judge."""
        session = copy.copy(self)
        session.usage = Usage()
        session._inner = None
        session._loading = threading.Lock()
        session._parent = self
        return session

    @property
    def restored(self) -> int:
        """Shared parts the real judge restored from kept states (0 before it loads)."""
        inner = self._inner
        return inner.restored if isinstance(inner, RestoringJudge) else 0

    @property
    def restored_tokens(self) -> int:
        """Their tokens, which the real judge did not read."""
        return restored_tokens(self._inner)

    def cancel(self) -> None:
        """Stop the real judge's requests in progress (samples in flight, Ctrl-C)."""
        if isinstance(self._inner, CancellableJudge):
            self._inner.cancel()

    def _key(self, kind: str, prompt: Prompt, extra: Any) -> str:
        identity = self.identity
        return _digest([identity.key, dict(identity.settings), kind, _prompt_parts(prompt), extra])

    def _lookup(self, key: str, counted: bool = True) -> Any | None:
        value = self._answer(key)
        if value is None:
            return None
        if counted:
            self.usage.cached_calls += 1
        return json.loads(value)

    def _remember(self, key: str, kind: str, value: Any, before: Usage) -> None:
        spent = self.usage - before
        text = json.dumps(value, ensure_ascii=False)
        self._keep(
            JudgeEntry(
                key, self.identity.key, kind, text, spent.prompt_tokens, spent.generated_tokens
            )
        )

    # where answers are kept: the database here; a subclass may keep them elsewhere
    # (localeval.evaluation.ray.remote: a worker of a cluster keeps them for the driver to store)

    def _answer(self, key: str) -> str | None:
        """The JSON text of the answer cached under `key`, or None."""
        return tables_of(self._tables).answer(key)

    def _keep(self, entry: JudgeEntry) -> None:
        tables_of(self._tables).keep_answer(entry)

    def _call(
        self,
        kind: str,
        prompt: Prompt,
        extra: Any,
        ask: Callable[[Judge], Any],
        counted: bool = True,
    ) -> Any:
        """The cached answer, else the judge's (remembered). `counted`: a hit counts as a
        cached judge call (a window check is not a judge call)."""
        key = self._key(kind, prompt, extra)
        cached = self._lookup(key, counted)
        if cached is not None:
            return cached
        judge = self._judge()
        before = self.usage.snapshot()
        value = ask(judge)
        self._remember(key, kind, value, before)
        return value

    def yes_probability(self, prompt: Prompt) -> float:
        return float(
            self._call("yes_probability", prompt, None, lambda j: j.yes_probability(prompt))
        )

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        return [
            float(p)
            for p in self._call(
                "choice_probabilities",
                prompt,
                list(options),
                lambda j: j.choice_probabilities(prompt, options),
            )
        ]

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        return self._call("generate", prompt, to_gbnf(schema), lambda j: j.generate(prompt, schema))

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        # a question of tokenization: cached too, so a warm run needs no model for it
        return bool(
            self._call(
                LENGTH_CHECK, prompt, reserve, lambda j: j.fits(prompt, reserve), counted=False
            )
        )


#: the cache's entries of whether a prompt fits the judge's window: tokenization, not a
#: call to the judge, so never counted as one
LENGTH_CHECK = "fits"


def _session_of(judge: Judge) -> Judge:
    """A session of the real judge when it has them (a server judge), else the judge."""
    return judge.session() if isinstance(judge, JudgeWithSessions) else judge


class CachedEmbedder:
    """An Embedder that keeps every vector it computed; the model loads on the first miss."""

    def __init__(
        self,
        identity: ModelIdentity,
        load: Callable[[], Embedder],
        cache: Database | CacheTables | None,
    ):
        self.identity = identity
        self.name = identity.name
        self._load = load
        self._inner: Embedder | None = None
        self._tables = cache_tables(cache)
        self._loading = threading.Lock()
        self.cached = 0
        self.computed = 0

    def _key(self, text: str) -> str:
        # settings that change the vectors (a prefix) key them too; none for most models,
        # whose keys stay what they were
        if self.identity.settings:
            return _digest([self.identity.key, dict(self.identity.settings), text])
        return _digest([self.identity.key, text])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        for key in dict.fromkeys(keys):
            stored = self._vector(key)
            if stored is not None:
                found[key] = np.frombuffer(stored, dtype="<f4")
        missing = [(k, t) for k, t in dict(zip(keys, texts, strict=True)).items() if k not in found]
        if missing:
            with self._loading:  # samples in flight may miss at the same moment
                if self._inner is None:
                    self._inner = self._load()
            vectors = self._inner.embed([t for _, t in missing])  # one batch for all misses
            for (key, _), vector in zip(missing, vectors, strict=True):
                vector = np.asarray(vector, dtype="<f4")
                found[key] = vector
                self._keep(VectorEntry(key, self.identity.key, vector.tobytes()))
        self.cached += len(keys) - len(missing)
        self.computed += len(missing)
        return np.stack([found[k] for k in keys])

    # where vectors are kept, as for CachedJudge

    def _vector(self, key: str) -> bytes | None:
        """The float32 bytes of the vector cached under `key`, or None."""
        return tables_of(self._tables).vector(key)

    def _keep(self, entry: VectorEntry) -> None:
        tables_of(self._tables).keep_vector(entry)


@dataclass(frozen=True)
class CacheStats:
    """How much the cache holds."""

    judge_entries: dict[str, int]  # by kind
    judge_models: int
    embedding_entries: int
    saved_prompt_tokens: int
    saved_generated_tokens: int

    def lines(self) -> list[str]:
        calls = {k: n for k, n in self.judge_entries.items() if k != LENGTH_CHECK}
        kinds = ", ".join(f"{k}: {n}" for k, n in sorted(calls.items())) or "none"
        checks = self.judge_entries.get(LENGTH_CHECK, 0)
        return [
            f"judge calls cached: {sum(calls.values())} ({kinds}), "
            f"from {counted(self.judge_models, 'judge model')}; prompt length checks cached: "
            f"{checks}",
            f"embeddings cached: {self.embedding_entries}",
            f"each full re-use saves {self.saved_prompt_tokens} prompt tokens and "
            f"{self.saved_generated_tokens} generated tokens",
        ]


def cache_file_missing(location: Location) -> bool:
    """Whether the cache is an SQLite file not made yet: a command that only looks (or
    clears) creates nothing, neither the file nor its folder. A server's database is
    opened as usual (its tables made by whoever first opens it)."""
    file = store_file(location)
    return file is not None and not file.exists()


def cache_stats(connection: Database) -> CacheStats:
    with connection.translating("reading the cache"):
        return _cache_stats(connection)


def _cache_stats(connection: Database) -> CacheStats:
    kinds = dict(connection.execute("SELECT kind, COUNT(*) FROM judge_cache GROUP BY kind"))
    models = connection.execute("SELECT COUNT(DISTINCT judge_sha256) FROM judge_cache").fetchone()
    tokens = connection.execute(
        "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(generated_tokens), 0) "
        "FROM judge_cache"
    ).fetchone()
    embeddings = connection.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()
    return CacheStats(kinds, models[0], embeddings[0], tokens[0], tokens[1])


def clear_cache(connection: Database) -> tuple[int, int]:
    """Delete every cached judge call and embedding; return how many of each were deleted
    (the prompt length checks deleted with them are not calls)."""
    with connection.transaction("clearing the cache") as db:
        db.execute("DELETE FROM judge_cache WHERE kind = ?", (LENGTH_CHECK,))
        judged = db.execute("DELETE FROM judge_cache").rowcount
        embedded = db.execute("DELETE FROM embedding_cache").rowcount
    with connection.translating("compacting the database"):
        connection.compact()
    return judged, embedded
