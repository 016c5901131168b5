"""The local SQLite database: run history and the judge/embedding cache share one file.

The schema is versioned from the first release on: `MIGRATIONS[i]` takes a database from
version i to i + 1, and `open_store` applies whatever is missing in one transaction each.
WAL journaling keeps the file consistent if the process is killed at any moment.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from localeval.errors import UsageError

DB_ENV = "LOCALEVAL_DB"
DEFAULT_DB = Path(".localeval") / "localeval.db"

#: each entry is the SQL that upgrades the schema by one version; append, never edit
MIGRATIONS: list[str] = [
    # 1: the judge and embedding caches (see localeval.runs.cache)
    """
    CREATE TABLE judge_cache (
        key TEXT PRIMARY KEY,          -- sha256 of judge sha256, call kind, prompt, schema
        judge_sha256 TEXT NOT NULL,
        kind TEXT NOT NULL,            -- 'yes_probability' | 'generate'
        value TEXT NOT NULL,           -- JSON
        prompt_tokens INTEGER NOT NULL,
        generated_tokens INTEGER NOT NULL,
        created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
    );
    CREATE TABLE embedding_cache (
        key TEXT PRIMARY KEY,          -- sha256 of embedder sha256 and text
        embedder_sha256 TEXT NOT NULL,
        vector BLOB NOT NULL,          -- float32, little-endian
        created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
    );
    """,
    # 2: run history (see localeval.runs.history): a run, the samples it has scored so far, and
    #    each sample's score and evidence per metric. A run with `finished` NULL is
    #    incomplete: interrupted, or still running.
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created TEXT NOT NULL,         -- ISO-8601 UTC, when the run started
        finished TEXT,                 -- ISO-8601 UTC when complete; NULL while incomplete
        fingerprint TEXT NOT NULL,     -- sha256 of what makes two runs the same evaluation
        dataset_path TEXT NOT NULL,
        dataset_sha256 TEXT NOT NULL,
        n_samples INTEGER NOT NULL,    -- rows in the dataset
        judge_name TEXT,               -- NULL when no metric used a judge
        judge_sha256 TEXT,
        embedder_name TEXT,
        embedder_sha256 TEXT,
        prompt_version TEXT NOT NULL,
        metrics TEXT NOT NULL,         -- JSON list, in the order they were run
        metric_settings TEXT NOT NULL, -- JSON {metric: {setting: value}}
        thresholds TEXT NOT NULL,      -- JSON {metric: threshold}
        gates TEXT,                    -- JSON list of gate results, set on completion
        localeval_version TEXT NOT NULL
    );
    CREATE INDEX runs_by_fingerprint ON runs (fingerprint, finished);
    CREATE INDEX runs_by_finished ON runs (finished);
    CREATE TABLE run_samples (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        sample_id TEXT NOT NULL,
        position INTEGER NOT NULL,     -- 0-based row index in the dataset
        line INTEGER NOT NULL,         -- where the row starts in the data file
        category TEXT,
        judge_calls INTEGER NOT NULL,  -- what scoring this sample cost
        cached_calls INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        generated_tokens INTEGER NOT NULL,
        seconds REAL NOT NULL,
        inputs TEXT NOT NULL,          -- JSON: question, answer, reference_answer, contexts
        PRIMARY KEY (run_id, sample_id),
        UNIQUE (run_id, position)
    );
    CREATE TABLE run_scores (
        run_id TEXT NOT NULL,
        sample_id TEXT NOT NULL,
        metric TEXT NOT NULL,
        score REAL,                    -- NULL when the metric is undefined for the sample
        undefined_reason TEXT,
        details TEXT NOT NULL,         -- JSON object: the metric's evidence
        PRIMARY KEY (run_id, sample_id, metric),
        FOREIGN KEY (run_id, sample_id)
            REFERENCES run_samples (run_id, sample_id) ON DELETE CASCADE
    );
    """,
    # 3: the rows `evaluate --skip-invalid` left out of a run: file, line, field, reason
    """
    ALTER TABLE runs ADD COLUMN skipped_rows TEXT NOT NULL DEFAULT '[]';  -- JSON list
    """,
    # 4: the judge settings that change its numbers (batch size, ...); NULL for older runs
    """
    ALTER TABLE runs ADD COLUMN judge_settings TEXT;  -- JSON object
    """,
    # 5: a judge without a file (a server) is named by its base_url, model and revision, and
    #    what its server reported about itself; a run may score one shard of its dataset;
    #    a server judge's retried requests are part of a sample's cost
    """
    ALTER TABLE runs ADD COLUMN judge_model TEXT;  -- JSON object; NULL for a judge file
    ALTER TABLE runs ADD COLUMN shard TEXT;        -- "K/N"; NULL for a run of every sample
    ALTER TABLE run_samples ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
    """,
]


def default_db_path() -> Path:
    """$LOCALEVAL_DB, else .localeval/localeval.db in the working folder."""
    return Path(os.environ[DB_ENV]) if os.environ.get(DB_ENV) else DEFAULT_DB


def schema_version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def migrate(connection: sqlite3.Connection) -> None:
    """Apply the migrations this database lacks, each in its own transaction."""
    version = schema_version(connection)
    if version > len(MIGRATIONS):
        raise UsageError(
            f"database schema version {version} is newer than this localeval "
            f"understands ({len(MIGRATIONS)}); upgrade localeval"
        )
    for target, sql in enumerate(MIGRATIONS[version:], start=version + 1):
        with connection:
            connection.executescript(f"BEGIN;\n{sql}\nPRAGMA user_version = {target};\nCOMMIT;")


def open_store(path: Path | None = None) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database; UsageError if it cannot be used."""
    db = path or default_db_path()
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(db, timeout=30, isolation_level=None)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA foreign_keys = ON")
        migrate(connection)
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"database {db}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"database {db}: {exc.strerror or exc}") from None
    return connection
