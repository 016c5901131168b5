"""The cache's tables and their entries: what a cached model reads and stores, on an SQLite
file or a team's PostgreSQL database (localeval.tools.cache puts the models behind them).

An entry is stored once, by one statement: of two machines that store the same key at
once, the first wins and the second's identical entry is dropped (`ON CONFLICT DO
NOTHING`), never written over, and no reader sees a row half-written.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from localeval.database import Database


@dataclass(frozen=True)
class JudgeEntry:
    """One cached judge call, as the judge_cache table holds it (`value`: the answer's JSON)."""

    key: str
    judge_sha256: str
    kind: str
    value: str
    prompt_tokens: int
    generated_tokens: int


@dataclass(frozen=True)
class VectorEntry:
    """One cached embedding, as the embedding_cache table holds it (float32 bytes)."""

    key: str
    embedder_sha256: str
    vector: bytes


def judge_answer(db: Database, key: str) -> str | None:
    with db.translating("reading the judge cache"):
        row = db.execute("SELECT value FROM judge_cache WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def keep_judge_entry(db: Database, entry: JudgeEntry) -> None:
    with db.translating("storing a judge answer in the cache"):
        db.execute(
            "INSERT INTO judge_cache (key, judge_sha256, kind, value, prompt_tokens, "
            "generated_tokens) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
            (
                entry.key,
                entry.judge_sha256,
                entry.kind,
                entry.value,
                entry.prompt_tokens,
                entry.generated_tokens,
            ),
        )


def cached_vector(db: Database, key: str) -> bytes | None:
    with db.translating("reading the embedding cache"):
        row = db.execute("SELECT vector FROM embedding_cache WHERE key = ?", (key,)).fetchone()
    return None if row is None else bytes(row[0])


def keep_vector_entry(db: Database, entry: VectorEntry) -> None:
    with db.translating("storing embeddings in the cache"):
        db.execute(
            "INSERT INTO embedding_cache (key, embedder_sha256, vector) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            (entry.key, entry.embedder_sha256, entry.vector),
        )


class CacheTables:
    """The cache's tables, for whichever thread asks: through the given connection in the
    thread that made it, a connection of its own to the same database in any other (closed
    when the thread's storage goes). Failures as StoreError."""

    def __init__(self, connection: Database):
        self._main = connection
        self._owner = threading.get_ident()
        self._local = threading.local()

    def _db(self) -> Database:
        if threading.get_ident() == self._owner:
            return self._main
        connection: Database | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._main.reopen()
            self._local.connection = connection
        return connection

    def answer(self, key: str) -> str | None:
        """The JSON text of a judge call's stored answer (None when there is none)."""
        return judge_answer(self._db(), key)

    def keep_answer(self, entry: JudgeEntry) -> None:
        keep_judge_entry(self._db(), entry)

    def vector(self, key: str) -> bytes | None:
        """The float32 bytes of a stored vector (None when there is none)."""
        return cached_vector(self._db(), key)

    def keep_vector(self, entry: VectorEntry) -> None:
        keep_vector_entry(self._db(), entry)

    def dimensions(self, embedder: str) -> int | None:
        """How long the vectors the cache holds for an embedder are (None: it holds none)."""
        db = self._db()
        with db.translating("reading the embedding cache"):
            row = db.execute(
                "SELECT length(vector) FROM embedding_cache WHERE embedder_sha256 = ? LIMIT 1",
                (embedder,),
            ).fetchone()
        return None if row is None else int(row[0]) // 4  # float32


def cache_tables(cache: Database | CacheTables | None) -> CacheTables | None:
    """The tables of a cached model (None: a subclass keeps its entries elsewhere)."""
    if cache is None or isinstance(cache, CacheTables):
        return cache
    return CacheTables(cache)


def tables_of(tables: CacheTables | None) -> CacheTables:
    if tables is None:
        raise RuntimeError("this cache keeps its entries elsewhere than in a database")
    return tables
