"""Deleting runs from the history (`localeval runs delete`, `runs prune`): each run keeps every
sample's inputs, scores and evidence, so a large dataset evaluated often makes a large
database. A run a live process is writing is never deleted, nor, unless asked
(`with_labels`), a run your team labelled: its labels cannot be computed again."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from localeval.database import Location, db_words
from localeval.errors import RunInUseError, UsageError, param
from localeval.history.lease import Owner
from localeval.history.records import StoredRun
from localeval.history.store import RunStore


@dataclass(frozen=True)
class Pruning:
    """What `runs prune --keep N` would delete, the runs it leaves because a live process is
    writing them, and those it leaves because they hold labels (with how many)."""

    delete: list[StoredRun]
    busy: list[StoredRun]
    labelled: list[tuple[StoredRun, int]] = field(default_factory=list)


def label_counts(store: RunStore, runs: Sequence[StoredRun]) -> dict[str, int]:
    """How many label rows each of the runs holds (runs without any left out)."""
    counts: dict[str, int] = {}
    with store._errors("counting the runs' labels"):
        for run in runs:
            row = store.connection.execute(
                "SELECT count(*) FROM run_labels WHERE run_id = ?", (run.id,)
            ).fetchone()
            if row[0]:
                counts[run.id] = int(row[0])
    return counts


def labels_kept_message(counts: dict[str, int], db: Location | None = None) -> str:
    """Why labelled runs are not deleted, and how to keep their labels and delete them
    (`db`: the store they are in, named in the command to paste)."""
    (run_id, n_labels), *more = counts.items()
    where = db_words(db)
    if not more:
        return (
            f"run {run_id} holds {n_labels} labels of your team, which cannot be computed "
            f"again: `localeval labels export {run_id}{where} -o labels.jsonl` keeps them in a "
            f"file, and {param('with_labels=True')} deletes the run with them"
        )
    return (
        f"runs {', '.join(counts)} hold {sum(counts.values())} labels of your team, which "
        f"cannot be computed again: `localeval labels export RUN{where} -o labels.jsonl` keeps "
        f"a run's labels in a file, and {param('with_labels=True')} deletes the runs with them"
    )


def runs_to_delete(
    store: RunStore, refs: Sequence[str], with_labels: bool = False
) -> list[StoredRun]:
    """The runs the references name, all resolved before any is deleted (a typo in one
    deletes none), each once; UsageError for a labelled one unless `with_labels`."""
    if not refs:
        raise UsageError("name at least one run to delete (see `localeval runs list`)")
    found: dict[str, StoredRun] = {}
    for ref in refs:
        run = store.resolve(ref)
        found.setdefault(run.id, run)
    runs = list(found.values())
    if not with_labels and (labelled := label_counts(store, runs)):
        raise UsageError(labels_kept_message(labelled, store.path))
    return runs


def plan_pruning(store: RunStore, keep: int, with_labels: bool = False) -> Pruning:
    """Every run but the `keep` newest (by start), except those being written now and,
    unless `with_labels`, those holding labels."""
    if keep < 0:
        raise UsageError(f"{param('keep')} {keep}: must be 0 or more")
    older = store.list_runs()[keep:]
    busy = [run for run in older if held_by_other(store, run)]
    held = {run.id for run in busy}
    older = [run for run in older if run.id not in held]
    counts = {} if with_labels else label_counts(store, older)
    labelled = [(run, counts[run.id]) for run in older if run.id in counts]
    return Pruning([run for run in older if run.id not in counts], busy, labelled)


def held_by_other(store: RunStore, run: StoredRun) -> bool:
    """Whether a live process other than this store is writing the run."""
    return store.held_by_other(run)


def delete_runs(
    store: RunStore, runs: Sequence[StoredRun], with_labels: bool = False
) -> tuple[int | None, int | None]:
    """Delete the runs with their samples and scores (and labels, `with_labels`), all or
    none (RunInUseError if a live process is writing one, UsageError if one was labelled
    meanwhile and not `with_labels`: checked under the same write lock), then compact an
    SQLite file; its size in bytes before and after (None for a server's database)."""
    before = database_size(store)
    with store._transaction("deleting runs") as db:
        now = time.time()
        for run in runs:
            if not with_labels:
                row = db.execute("SELECT count(*) FROM run_labels WHERE run_id = ?", (run.id,))
                if n_labels := int(row.fetchone()[0]):
                    raise UsageError(labels_kept_message({run.id: n_labels}, store.path))
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
