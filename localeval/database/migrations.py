"""The schema: one list of migrations for both stores, written in SQLite's SQL, and the
small translation that runs the same DDL on PostgreSQL (`postgres_ddl`).

`MIGRATIONS[i]` takes a database from version i to i + 1; every SQLite database an older
localeval left is upgraded by the same text it always was. On PostgreSQL the statements are
translated by rules that keep their meaning: 64-bit INTEGER as BIGINT, REAL (a double in
SQLite) as DOUBLE PRECISION, BLOB as BYTEA, an `INTEGER PRIMARY KEY` (SQLite's rowid) as an
identity column, the UTC timestamp default in PostgreSQL's words, and every table given the
`rowid` that SQLite tables have implicitly (the order rows were made in, which queries
order by).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from localeval.errors import UsageError

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
    # 2: run history (see localeval.history.store): a run, the samples it has scored so far, and
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
    # 6: the lease of the process writing a run (see localeval.history.lease): two processes
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
    #    localeval.labels.store): one row per label made, never changed; a reviewer's current
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
    #    `evaluate --estimate` (see localeval.estimate.speed)
    """
    CREATE TABLE model_speed (
        key TEXT PRIMARY KEY,          -- sha256 of the model's identity, settings, machine
        model TEXT NOT NULL,           -- the models.toml entry's name, for people
        machine TEXT NOT NULL,         -- host, CPU, cores
        speed TEXT NOT NULL,           -- JSON: the measured figures
        measured TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
    );
    """,
    # 12: the labels a reviewer undid, as they were made, so that `runs copy` carries an
    #    undo to the other store (and never brings the undone label back from there)
    """
    CREATE TABLE run_labels_undone (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        sample_id TEXT NOT NULL,
        metric TEXT NOT NULL,
        verdict INTEGER,
        text TEXT NOT NULL,
        mark TEXT,
        label REAL NOT NULL,
        reviewer TEXT NOT NULL,
        created TEXT NOT NULL,         -- when the undone label was made
        source TEXT NOT NULL
    );
    CREATE INDEX run_labels_undone_by_run ON run_labels_undone (run_id);
    """,
    # 13: how a label's sample was picked (localeval.labels.store): 'random' (the review
    #    page's "label for the estimate" order, or an import said to be a random sample),
    #    which the corrected estimate may use; 'chosen' (worst first, a search, an import
    #    of unknown selection), kept for calibrate only
    """
    ALTER TABLE run_labels ADD COLUMN selection TEXT NOT NULL DEFAULT 'chosen';
    """,
    # 14: the comparison `evaluate --until-decided` made (results.json's run.until_decided),
    #    kept with the run it stopped by design (and with that run once a later `evaluate`
    #    completes it); NULL for a run no such comparison scored
    """
    ALTER TABLE runs ADD COLUMN until_decided TEXT;  -- JSON object
    """,
    # 15: the versions of Python and of the packages that change a run's numbers
    #    (results.json's run.software); NULL for runs recorded before
    """
    ALTER TABLE runs ADD COLUMN software TEXT;  -- JSON object
    """,
]

#: the schema version a database has once every migration is applied
SCHEMA_VERSION = len(MIGRATIONS)


def statements(sql: str) -> Iterator[str]:
    """The statements of a migration, one at a time: a migration runs inside the transaction
    of its store, statement by statement (SQLite's `executescript` would commit it)."""
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip():
        yield pending


def check_version(version: int, where: str) -> None:
    """A database a newer localeval migrated is refused (`where`: "database PLACE: ")."""
    if version > SCHEMA_VERSION:
        raise UsageError(
            f"{where}schema version {version} is newer than this localeval understands "
            f"({SCHEMA_VERSION}); upgrade localeval"
        )


#: SQLite's words and PostgreSQL's for the same thing, applied in order to a statement
#: without its comments
_POSTGRES_WORDS: list[tuple[str, str]] = [
    (r"\bINTEGER PRIMARY KEY\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    (r"\bINTEGER\b", "BIGINT"),
    (r"\bREAL\b", "DOUBLE PRECISION"),
    (r"\bBLOB\b", "BYTEA"),
    (
        re.escape("(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"),
        """(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))""",
    ),
]
_CREATE_TABLE = re.compile(r"^\s*CREATE TABLE (\w+) \((.*)\)\s*;?\s*$", re.DOTALL)


def postgres_ddl(statement: str) -> str:
    """One migration statement as PostgreSQL says it (see the module's docstring)."""
    text = re.sub(r"--[^\n]*", "", statement)  # comments hold words the rules would change
    for sqlite_words, postgres_words in _POSTGRES_WORDS:
        text = re.sub(sqlite_words, postgres_words, text)
    table = _CREATE_TABLE.match(text)
    if table is not None and "AS IDENTITY PRIMARY KEY" not in table.group(2):
        # SQLite's implicit rowid, last: columns added later come after it
        name, body = table.group(1), table.group(2).rstrip()
        text = f"CREATE TABLE {name} ({body},\n    rowid BIGINT GENERATED ALWAYS AS IDENTITY\n)"
    return text.strip().rstrip(";")
