"""Deleting runs from the history (`localeval runs delete`, `runs prune`): each run keeps every
sample's inputs, scores and evidence, so a large dataset evaluated often makes a large
database. A run a live process is writing is never deleted."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from localeval.errors import RunInUseError, UsageError
from localeval.runs.history import RunStore
from localeval.runs.lease import Owner, alive
from localeval.runs.records import StoredRun


@dataclass(frozen=True)
class Pruning:
    """What `runs prune --keep N` would delete, and the runs it leaves because a live process
    is writing them."""

    delete: list[StoredRun]
    busy: list[StoredRun]


def runs_to_delete(store: RunStore, refs: Sequence[str]) -> list[StoredRun]:
    """The runs the references name, all resolved before any is deleted (a typo in one
    deletes none), each once."""
    if not refs:
        raise UsageError("name at least one run to delete (see `localeval runs list`)")
    found: dict[str, StoredRun] = {}
    for ref in refs:
        run = store.resolve(ref)
        found.setdefault(run.id, run)
    return list(found.values())


def plan_pruning(store: RunStore, keep: int) -> Pruning:
    """Every run but the `keep` newest (by start), except those being written now."""
    if keep < 0:
        raise UsageError(f"--keep {keep}: must be 0 or more")
    older = store.list_runs()[keep:]
    busy = [run for run in older if held_by_other(store, run)]
    held = {run.id for run in busy}
    return Pruning([run for run in older if run.id not in held], busy)


def held_by_other(store: RunStore, run: StoredRun) -> bool:
    """Whether a live process other than this store is writing the run."""
    owner = run.owner
    other = owner is not None and owner.token != store.owner.token
    return other and owner is not None and alive(owner, run.heartbeat, time.time())


def delete_runs(store: RunStore, runs: Sequence[StoredRun]) -> tuple[int, int]:
    """Delete the runs with their samples and scores, all or none (RunInUseError if a live
    process is writing one: checked under the same write lock), then compact the file; its
    size in bytes before and after."""
    before = database_size(store)
    with store._transaction("deleting runs") as db:
        now = time.time()
        for run in runs:
            row = db.execute("SELECT owner, heartbeat FROM runs WHERE id = ?", (run.id,))
            owner_text, heartbeat = row.fetchone() or (None, None)
            owner = Owner.parse(owner_text)
            other = owner is not None and owner.token != store.owner.token
            if other and owner is not None and alive(owner, heartbeat, now):
                age = None if heartbeat is None else max(0.0, now - heartbeat)
                raise RunInUseError(run.id, owner.describe(), age)
            db.execute("DELETE FROM runs WHERE id = ?", (run.id,))
    # the space of the deleted rows back to the file system, and the write-ahead log emptied
    # into the file, so that the file's size is what it holds
    with store._errors("compacting the database"):
        store.connection.execute("VACUUM")
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return before, database_size(store)


def database_size(store: RunStore) -> int:
    """Bytes of the database file and its write-ahead log."""
    files = [store.path, store.path.with_name(store.path.name + "-wal")]
    return sum(file.stat().st_size for file in files if file.exists())
