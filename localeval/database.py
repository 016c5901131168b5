"""The local SQLite database: run history and the judge/embedding cache share one file.

The schema is versioned from the first release on: `MIGRATIONS[i]` takes a database from
version i to i + 1, and `open_store` applies whatever is missing in one IMMEDIATE
transaction, the version read under the write lock: processes that open a new database at
the same moment wait for each other rather than apply a migration twice. An SQLite file
that holds tables of its own is never given localeval's. WAL journaling keeps the file
consistent if the process is killed at any moment. `open_store(..., readonly=True)` reads
a database that cannot be written (a read-only file or folder) without changing it.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from localeval.errors import UsageError

DB_ENV = "LOCALEVAL_DB"
DEFAULT_DB = Path(".localeval") / "localeval.db"

#: each entry is the SQL that upgrades the schema by one version; append, never edit
MIGRATIONS: list[str] = [
    # 1: the judge and embedding caches (see localeval.tools.cache)
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
    # 5: what else a run's judge and embedder records hold (the judge's calibration maps;
    # what names a judge that has no file; an embedder's prefix); NULL when nothing more
    """
    ALTER TABLE runs ADD COLUMN judge_extra TEXT;     -- JSON object
    ALTER TABLE runs ADD COLUMN embedder_extra TEXT;  -- JSON object
    """,
    # 6: the lease of the process writing a run (see localeval.runs.lease): two processes
    #    never record into the same run
    """
    ALTER TABLE runs ADD COLUMN owner TEXT;      -- JSON: host, boot, pid, started, token
    ALTER TABLE runs ADD COLUMN heartbeat REAL;  -- unix time the owner last stored a sample
    """,
    # 7: a run may score one shard of its dataset (evaluate --shard); a server judge's
    #    retried requests are part of a sample's cost. (What names a server's judge is
    #    kept in judge_extra, migration 5.)
    """
    ALTER TABLE runs ADD COLUMN shard TEXT;        -- "K/N"; NULL for a run of every sample
    ALTER TABLE run_samples ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
    """,
    # 8: a run whose data changed while it was scored holds samples of two contents: it is
    #    marked, never continued nor completed
    """
    ALTER TABLE runs ADD COLUMN invalid TEXT;  -- why it can never be completed; NULL if it can
    """,
    # 9: reviewers' labels of a run's judge verdicts and sample scores (see
    #    localeval.runs.labels): one row per label made, never changed; a reviewer's current
    #    label of an item is their latest row, and undo deletes their latest row
    """
    CREATE TABLE run_labels (
        id INTEGER PRIMARY KEY,        -- the order labels were made in
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        sample_id TEXT NOT NULL,
        metric TEXT NOT NULL,
        verdict INTEGER,               -- index among the metric's verdicts; NULL: its score
        text TEXT NOT NULL,            -- the verdict's text (statement, chunk, answer); ''
        mark TEXT,                     -- 'right' 'wrong' 'too_high' 'too_low'; NULL: imported
        label REAL NOT NULL,           -- in [0, 1]: 1 the verdict's yes is true / the sample passes
        reviewer TEXT NOT NULL,
        created TEXT NOT NULL,         -- ISO-8601 UTC
        source TEXT NOT NULL           -- 'review', or the file it was imported from
    );
    CREATE INDEX run_labels_by_item ON run_labels (run_id, sample_id, metric, verdict);
    """,
    # 10: a run whose metrics asked no judge (BLEU, ROUGE-L) records no prompt version: ''
    #    in prompt_version (NOT NULL since migration 2), read as none. Such runs recorded
    #    before this said the default set's name, which they never asked.
    """
    UPDATE runs SET prompt_version = '' WHERE judge_name IS NULL;
    """,
    # 11: how fast each judge and embedder works on each machine, measured once for
    #    `evaluate --estimate` (see localeval.tools.speed)
    """
    CREATE TABLE model_speed (
        key TEXT PRIMARY KEY,          -- sha256 of the model's identity, settings, machine
        model TEXT NOT NULL,           -- the models.toml entry's name, for people
        machine TEXT NOT NULL,         -- host, CPU, cores
        speed TEXT NOT NULL,           -- JSON: the measured figures
        measured TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
    );
    """,
]


def default_db_path() -> Path:
    """$LOCALEVAL_DB, else .localeval/localeval.db in the working folder."""
    return Path(os.environ[DB_ENV]) if os.environ.get(DB_ENV) else DEFAULT_DB


def schema_version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def _statements(sql: str) -> Iterator[str]:
    """The statements of a migration, one at a time: `executescript` would commit the
    transaction the migration must run in."""
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip():
        yield pending


def _check_version(version: int) -> None:
    if version > len(MIGRATIONS):
        raise UsageError(
            f"database schema version {version} is newer than this localeval "
            f"understands ({len(MIGRATIONS)}); upgrade localeval"
        )


def _refuse_foreign(connection: sqlite3.Connection, where: str) -> None:
    """A database without localeval's version that already holds tables is someone else's:
    adding ours would change a file the user did not mean to give."""
    names = [
        row[0]
        for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    if names:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise UsageError(
            f"{where}not a localeval database (it holds other tables: {shown}); it is left as "
            "it is. Give another --db"
        )


def migrate(connection: sqlite3.Connection, where: str = "") -> None:
    """Apply the migrations this database lacks, all in one IMMEDIATE transaction (`where`:
    how a message names the database, "database PATH: ")."""
    version = schema_version(connection)
    _check_version(version)
    if version == len(MIGRATIONS):
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = schema_version(connection)  # another process may have migrated meanwhile
        _check_version(version)
        if version == 0:
            _refuse_foreign(connection, where)
        for sql in MIGRATIONS[version:]:
            for statement in _statements(sql):
                connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


#: SQLite's errors for a file that is no longer a sound database
_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def database_error(db: Path, exc: sqlite3.Error, doing: str = "") -> UsageError:
    """One line for an SQLite error on the database `db` while `doing` ("reading runs"; ""
    while opening it): a damaged or overwritten file is said to be so; of any other error
    while working in it, that the runs stored so far are intact."""
    where = f"database {db}: {exc}" + (f" while {doing}" if doing else "")
    name = getattr(exc, "sqlite_errorname", None)
    # on opening, "not a database" is said as it is: --db may name some other file
    if name == "SQLITE_CORRUPT" or (name in _DAMAGED and doing):
        # nothing here can say what of it is still intact
        return UsageError(
            f"{where}; the file is damaged or was overwritten: use --db PATH to put the "
            "database elsewhere"
        )
    if not doing:
        return UsageError(where)
    return UsageError(
        f"{where}. Runs stored so far are intact; fix the cause, or use --db PATH to put the "
        "database elsewhere"
    )


def open_store(path: Path | None = None, readonly: bool = False) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database; UsageError if it cannot be used.
    `readonly`: open it for reading only, never creating or changing it (a database that can
    be written is migrated first, as always)."""
    db = path or default_db_path()
    try:
        if readonly and not _writable(db):
            return _open_read_only(db)
        db.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(db, timeout=30, isolation_level=None)
        try:
            migrate(connection, f"database {db}: ")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            connection.close()
            raise
    except sqlite3.DatabaseError as exc:
        raise database_error(db, exc) from None
    except OSError as exc:
        raise UsageError(f"database {db}: {exc.strerror or exc}") from None
    return connection


def _writable(db: Path) -> bool:
    """Whether SQLite could write the database and the journal files beside it (access(2)
    also answers for root and for a read-only mount, which permission bits do not)."""
    if not db.exists():
        return True  # reading it says that it does not exist
    folder = db.parent if str(db.parent) else Path(".")
    return os.access(db, os.W_OK) and os.access(folder, os.W_OK)


def _open_read_only(db: Path) -> sqlite3.Connection:
    """A database that cannot be written, opened for reading. SQLite needs to create the
    -shm file beside a WAL database even to read it; where it cannot, the file is read as
    immutable, which is safe because nothing can write there either."""
    wal = db.with_name(db.name + "-wal")
    if wal.exists() and wal.stat().st_size:
        raise UsageError(
            f"database {db}: its write-ahead log {wal.name} holds changes that cannot be read "
            "without write access to its folder"
        )
    uri = f"file:{urllib.parse.quote(os.fspath(db.resolve()))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
        schema_version(connection)
    except sqlite3.OperationalError:
        connection = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)
    version = schema_version(connection)
    _check_version(version)
    if version < len(MIGRATIONS):
        connection.close()
        raise UsageError(
            f"database {db}: schema version {version} needs upgrading to {len(MIGRATIONS)}, "
            "which needs write access; open it once where it can be written"
        )
    return connection
