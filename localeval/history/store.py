"""The run history: every evaluation's settings and each sample's scores, kept in the store
(an SQLite file or a PostgreSQL database: localeval.database).

Each sample's results are written in a transaction of their own as soon as it is scored,
so a run killed at any moment keeps everything it finished; a run is marked complete
(`finished` set) only after its last sample. An incomplete run with the same fingerprint
(dataset content, judge and embedder files, prompt version, metrics and their settings) is
"the same evaluation" and can be continued, by one process at a time: the store that
starts or continues a run holds its lease (localeval.history.lease), and every sample it
stores checks that it still does. `latest` and `latest~N` name complete runs, the most
recently finished first.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from localeval.closing import Closing
from localeval.data.samples import Sample
from localeval.database import (
    Database,
    Location,
    StoreError,
    db_words,
    default_db_path,
    open_store,
    store_exists,
    store_file,
)
from localeval.errors import NoRunHistory, RunInUseError, UsageError
from localeval.history.lease import (
    Owner,
    RunLease,
    close_owner,
    held_by_other,
    open_owner,
    take_lease,
)
from localeval.history.records import (
    RUN_COLUMNS,
    StoredRun,
    embedder_extra,
    fingerprint,
    json_text,
    judge_extra,
    not_resumable,
    stored_run,
)
from localeval.history.run_reads import RunReads
from localeval.results.contract import sample_inputs
from localeval.results.gates import GateResult
from localeval.results.model import RunInfo, SampleResult
from localeval.results.refs import RunRef
from localeval.version import __version__


class RunStore(RunReads, Closing):
    """Reads and writes runs in the localeval database (the reading of a run's results:
    localeval.history.run_reads)."""

    def __init__(self, connection: Database, path: Location):
        self.connection = connection
        self.path = path
        #: this store as the owner of the runs it writes
        self.owner = open_owner()
        self._owner_text = self.owner.text()

    @classmethod
    def open(cls, path: Location | None = None, readonly: bool = False) -> RunStore:
        """The database at `path` (default: default_db_path()); `readonly` for a command that
        only reads it, which then works on a database it cannot write."""
        db = path or default_db_path()
        return cls(open_store(db, readonly), db)

    def close(self) -> None:
        close_owner(self.owner)
        self.connection.close()

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[Database]:
        with self.connection.transaction(doing) as db:
            yield db

    def held_by_other(self, run: StoredRun, now: float | None = None) -> bool:
        """Whether a live process other than this store is writing the run."""
        with self._errors("reading a run's lease"):
            lease = RunLease(run.id, run.owner, run.heartbeat)
            return held_by_other(
                self.connection, lease, self.owner, time.time() if now is None else now
            )

    # --- writing a run -------------------------------------------------------------------

    def start(self, info: RunInfo, n_samples: int, thresholds: Mapping[str, float]) -> StoredRun:
        """Record a new, incomplete run."""
        if info.dataset is None or info.dataset_sha256 is None:
            raise ValueError("a stored run needs its dataset path and sha256")  # a caller bug
        judge = info.judge or {}
        embedder = info.embedder or {}
        with self._errors("starting a run"):
            self.connection.hold_lease(info.run_id)  # a new id: free
        try:
            with self._transaction("starting a run") as db:
                db.execute(
                    "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, "
                    "n_samples, judge_name, judge_sha256, embedder_name, embedder_sha256, "
                    "prompt_version, metrics, metric_settings, thresholds, localeval_version, "
                    "skipped_rows, judge_settings, judge_extra, embedder_extra, owner, "
                    "heartbeat, shard, software) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        info.run_id,
                        info.created,
                        fingerprint(info),
                        info.dataset,
                        info.dataset_sha256,
                        n_samples,
                        judge.get("name"),
                        judge.get("sha256"),
                        embedder.get("name"),
                        embedder.get("sha256"),
                        info.prompt_version or "",  # NOT NULL: '' for none (migration 8)
                        json_text(info.metrics),
                        json_text(info.metric_settings),
                        json_text(dict(thresholds)),
                        __version__,
                        json_text(info.skipped_rows),
                        json_text(judge["settings"]) if "settings" in judge else None,
                        json_text(extra) if (extra := judge_extra(judge)) else None,
                        json_text(more) if (more := embedder_extra(embedder)) else None,
                        self._owner_text,
                        time.time(),
                        info.shard,
                        json_text(info.software) if info.software else None,
                    ),
                )
        except BaseException:
            self._let_go(info.run_id)  # the new run was not made
            raise
        return self.get(info.run_id)

    def claim(self, run_id: str) -> StoredRun | None:
        """Take the lease of an incomplete run to continue it; None if it was completed
        meanwhile, RunInUseError while another live process holds it (checked and taken
        under one write lock, so of two processes claiming at once one gets it)."""
        try:
            with self._transaction("taking over a run") as db:
                row = db.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,))
                found = row.fetchone()
                if found is None:
                    raise UsageError(f"no run '{run_id}' in {self.path}")
                run = stored_run(found)
                if run.complete:
                    return None
                if run.invalid is not None:
                    raise not_resumable(run)
                now = time.time()
                if not take_lease(db, RunLease(run.id, run.owner, run.heartbeat), self.owner, now):
                    age = None if run.heartbeat is None else max(0.0, now - run.heartbeat)
                    holder = run.owner.describe() if run.owner else "another process"
                    raise RunInUseError(run.id, holder, age)
                db.execute(
                    "UPDATE runs SET owner = ?, heartbeat = ? WHERE id = ?",
                    (self._owner_text, now, run_id),
                )
        except BaseException:
            self._let_go(run_id)
            raise
        return self.get(run_id)

    def _let_go(self, run_id: str) -> None:
        """Give up the server's hold on a run (none on SQLite), if the server is still there
        to say so to (a connection that ended holds nothing)."""
        with contextlib.suppress(StoreError):
            self.connection.drop_lease(run_id)

    def release(self, run_id: str) -> None:
        """Give up the lease of a run this store holds (it stopped part-way)."""
        with self._transaction("releasing a run"):
            self.connection.execute(
                "UPDATE runs SET owner = NULL WHERE id = ? AND owner = ?",
                (run_id, self._owner_text),
            )
        self._let_go(run_id)

    def invalidate(self, run_id: str, reason: str) -> None:
        """Mark a run this store holds as never to be continued (`reason`: why), and give up
        its lease."""
        with self._transaction("marking a run invalid"):
            self.connection.execute(
                "UPDATE runs SET invalid = ?, owner = NULL WHERE id = ? AND owner = ?",
                (reason, run_id, self._owner_text),
            )
        self._let_go(run_id)

    def record_decision(self, run_id: str, decision: Mapping[str, Any]) -> None:
        """Keep with a run this store holds the comparison `--until-decided` made
        (results.json's `run.until_decided`), replacing one an earlier try made."""
        with self._transaction("recording a run's comparison") as db:
            self._renew(db, run_id)
            db.execute(
                "UPDATE runs SET until_decided = ? WHERE id = ?",
                (json_text(dict(decision)), run_id),
            )

    def discard_empty(self, run_id: str) -> bool:
        """Remove a run this store holds that has no sample stored; whether it did."""
        with self._transaction("removing an empty run") as db:
            removed = db.execute(
                "DELETE FROM runs WHERE id = ? AND owner = ? AND NOT EXISTS "
                "(SELECT 1 FROM run_samples WHERE run_id = ?)",
                (run_id, self._owner_text, run_id),
            ).rowcount
        if removed:
            self._let_go(run_id)
        return bool(removed)

    def _renew(self, db: Database, run_id: str) -> None:
        """Inside a write: refresh the lease, or refuse if another process has taken it."""
        held = db.execute(
            "UPDATE runs SET heartbeat = ? WHERE id = ? AND owner = ?",
            (time.time(), run_id, self._owner_text),
        ).rowcount
        if not held:
            owner = db.execute("SELECT owner FROM runs WHERE id = ?", (run_id,)).fetchone()
            holder = stored_owner(owner[0] if owner else None)
            raise UsageError(
                f"run {run_id} is no longer this process's to write ({holder} holds it); "
                "this process stops, and the samples it stored are kept"
            )

    def set_thresholds(self, run_id: str, thresholds: Mapping[str, float]) -> None:
        """A resumed run takes the thresholds of the command that finishes it."""
        with self._transaction("updating a run"):
            self.connection.execute(
                "UPDATE runs SET thresholds = ? WHERE id = ?", (json_text(dict(thresholds)), run_id)
            )

    def has_sample(self, run_id: str, sample_id: str) -> bool:
        with self._errors("reading a run"):
            row = self.connection.execute(
                "SELECT 1 FROM run_samples WHERE run_id = ? AND sample_id = ?", (run_id, sample_id)
            ).fetchone()
        return row is not None

    def record_sample(self, run_id: str, position: int, result: SampleResult) -> None:
        """Store one scored sample, all metrics at once or nothing."""
        sample, usage = result.sample, result.usage
        with self._transaction("storing a sample's scores") as db:
            self._renew(db, run_id)
            inserted = db.execute(
                "INSERT INTO run_samples (run_id, sample_id, position, line, category, "
                "judge_calls, cached_calls, prompt_tokens, generated_tokens, seconds, inputs, "
                "retries) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    run_id,
                    sample.sample_id,
                    position,
                    sample.line,
                    sample.category,
                    usage.judge_calls,
                    usage.cached_calls,
                    usage.prompt_tokens,
                    usage.generated_tokens,
                    usage.seconds,
                    json_text(sample_inputs(sample)),
                    usage.retries,
                ),
            ).rowcount
            if not inserted:
                return  # stored before (the lease rules out another process)
            db.executemany(
                "INSERT INTO run_scores (run_id, sample_id, metric, score, undefined_reason, "
                "details) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (run_id, sample.sample_id, name, r.score, r.reason, json_text(r.details))
                    for name, r in result.results.items()
                ],
            )

    def complete(self, run_id: str, gates: Sequence[GateResult]) -> StoredRun:
        """Mark a run finished, with its gates; refused while samples are missing."""
        run = self.get(run_id)
        if run.n_done != run.n_samples:
            raise ValueError(f"run {run_id} has {run.n_done} of {run.n_samples} samples")
        finished = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with self._transaction("completing a run") as db:
            self._renew(db, run_id)
            db.execute(
                "UPDATE runs SET finished = ?, gates = ?, owner = NULL WHERE id = ?",
                (finished, json_text([g.as_dict() for g in gates]), run_id),
            )
        self._let_go(run_id)
        return self.get(run_id)

    # --- finding runs ----------------------------------------------------------------------

    def _runs(self, where: str = "", args: Sequence[Any] = (), tail: str = "") -> list[StoredRun]:
        with self._errors("reading runs"):
            rows = self.connection.execute(
                f"SELECT {RUN_COLUMNS} FROM runs {where} {tail}", tuple(args)
            ).fetchall()
        return [stored_run(row) for row in rows]

    def get(self, run_id: str) -> StoredRun:
        runs = self._runs("WHERE id = ?", (run_id,))
        if not runs:
            raise UsageError(
                f"no run '{run_id}' in {self.path} (see `localeval runs list{db_words(self.path)}`)"
            )
        return runs[0]

    def find_resumable(self, fingerprint_hex: str) -> list[StoredRun]:
        """The incomplete runs of the same evaluation that may be continued, newest first
        (some may be held by a live process: see `claim`)."""
        return self._runs(
            "WHERE fingerprint = ? AND finished IS NULL AND invalid IS NULL",
            (fingerprint_hex,),
            "ORDER BY rowid DESC",
        )

    def list_runs(self, limit: int | None = None) -> list[StoredRun]:
        """Runs, newest first (by start time), incomplete ones included."""
        tail = "ORDER BY created DESC, rowid DESC" + (f" LIMIT {int(limit)}" if limit else "")
        return self._runs(tail=tail)

    def resolve(self, ref: str) -> StoredRun:
        """A run by id, unique id prefix, `latest` or `latest~N` (complete runs, newest
        finished first)."""
        back = RunRef(ref).latest_back()
        if back is not None:
            runs = self._runs(
                "WHERE finished IS NOT NULL",
                (),
                f"ORDER BY finished DESC, rowid DESC LIMIT {back + 1}",
            )
            if len(runs) <= back:
                count = len(runs)
                raise UsageError(
                    f"'{ref}': {self.path} holds {count} complete run{'s' * (count != 1)}"
                )
            return runs[back]
        runs = self._runs("WHERE id = ?", (ref,)) or self._runs(
            "WHERE lower(id) LIKE ? ESCAPE '\\'",
            (_like_prefix(ref.lower()),),
            "ORDER BY rowid LIMIT 2",
        )
        if not runs:
            raise UsageError(
                f"no run '{ref}' in {self.path} (see `localeval runs list{db_words(self.path)}`)"
            )
        if len(runs) > 1:
            raise UsageError(f"'{ref}' matches more than one run; give more of the id")
        return runs[0]


def stored_owner(text: str | None) -> str:
    """Who holds a lease, for a message."""
    owner = Owner.parse(text)
    return "no process" if owner is None else owner.describe()


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@dataclass
class RunSink:
    """The run history as the engine's sink: each sample committed as it is scored."""

    store: RunStore
    run: StoredRun

    def has(self, position: int, sample: Sample) -> bool:
        return bool(self.run.n_done) and self.store.has_sample(self.run.id, sample.sample_id)

    def add(self, position: int, result: SampleResult) -> None:
        self.store.record_sample(self.run.id, position, result)


def open_history(db_path: Location | None, writable: bool = False) -> RunStore:
    """The run history, which must exist already, for reading (reading it never creates
    one, and works where it cannot be written) or, `writable`, for changing it."""
    path = db_path or default_db_path()
    if not store_exists(path):
        absence = "does not exist" if store_file(path) is not None else "holds no run history yet"
        raise NoRunHistory(str(path), absence)
    return RunStore.open(path, readonly=not writable)
