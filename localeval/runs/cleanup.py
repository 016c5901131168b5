"""Deleting runs from the history (`localeval runs delete`, `runs prune`): each run keeps every
sample's inputs, scores and evidence, so a large dataset evaluated often makes a large
database. A run a live process is writing is never deleted."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from localeval.errors import RunInUseError, UsageError
from localeval.runs.history import RunStore
from localeval.runs.lease import Owner
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
    return store.held_by_other(run)


def delete_runs(store: RunStore, runs: Sequence[StoredRun]) -> tuple[int | None, int | None]:
    """Delete the runs with their samples and scores, all or none (RunInUseError if a live
    process is writing one: checked under the same write lock), then compact an SQLite
    file; its size in bytes before and after (None for a server's database)."""
    before = database_size(store)
    with store._transaction("deleting runs") as db:
        now = time.time()
        for run in runs:
            row = db.execute("SELECT owner, heartbeat FROM runs WHERE id = ?", (run.id,))
            owner_text, heartbeat = row.fetchone() or (None, None)
            owner = Owner.parse(owner_text)
            if owner is not None and store.held_by_other(
                replace(run, owner=owner, heartbeat=heartbeat), now
            ):
                age = None if heartbeat is None else max(0.0, now - heartbeat)
                raise RunInUseError(run.id, owner.describe(), age)
            db.execute("DELETE FROM runs WHERE id = ?", (run.id,))
    with store._errors("compacting the database"):
        store.connection.compact()
    return before, database_size(store)


def database_size(store: RunStore) -> int | None:
    """Bytes of the database file and its write-ahead log (None for a server's database)."""
    return store.connection.size()
