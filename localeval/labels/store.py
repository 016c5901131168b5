"""Reviewers' labels of a run's judge verdicts and sample scores, kept in the run database
(table run_labels, migration 8).

A label says what is true: for a verdict, 1 when its yes (supported, addresses the
question, useful) is right and 0 when it is not; for a sample's score on a metric, 1 when
the sample deserves to pass that metric's gate and 0 when it does not. The reviewer's own
words are kept beside it (`mark`: right / wrong, too_high / right / too_low). Every label
made is a row of its own, never changed: a reviewer's current label of an item is their
latest row, undo deletes their latest row (kept in run_labels_undone, so that a copy of the
run carries the undo), and two reviewers' labels of one item are both kept. Each write is
its own transaction, so a label is saved when it is made.
"""

from __future__ import annotations

import getpass
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from localeval.closing import Closing
from localeval.database import LOCKED, Database, Location, StoreError, open_store, write_locked
from localeval.errors import UsageError
from localeval.results.model import now
from localeval.results.person_values import CHOSEN

#: what a reviewer may say of a verdict, and of a sample's score
VERDICT_MARKS = ("right", "wrong")
SCORE_MARKS = ("too_high", "right", "too_low")

#: how long a write waits for another process's write to end before saying so
BUSY_MS = 5000


@dataclass(frozen=True)
class Label:
    """One label of one item of a run: a verdict (`verdict` its index among the metric's
    verdicts of the sample) or the sample's score on the metric (`verdict` None)."""

    sample_id: str
    metric: str
    verdict: int | None
    #: the verdict's text (statement, chunk, answer); "" for a score
    text: str
    label: float
    reviewer: str
    mark: str | None = None
    created: str = field(default_factory=now)
    #: "review", or the file it was imported from
    source: str = "review"
    #: how its sample was picked: RANDOM (it may count for the corrected estimate) or CHOSEN
    selection: str = CHOSEN
    id: int | None = None

    @property
    def item(self) -> tuple[str, str, int | None]:
        return self.sample_id, self.metric, self.verdict

    def as_dict(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id,
            "metric": self.metric,
            "verdict": self.verdict,
            "text": self.text,
            "label": self.label,
            "mark": self.mark,
            "reviewer": self.reviewer,
            "time": self.created,
            "source": self.source,
            "selection": self.selection,
        }


def default_reviewer() -> str:
    """The OS user's name (whose labels they are when no reviewer is named)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (a container without a passwd entry)
        return "reviewer"


def locked_message(db: Location) -> str:
    return (
        f"database {db} is being written by another process (it holds the write lock); "
        "try again when that process is done"
    )


def check_unlocked(db: Location, wait_s: float = 1.0) -> None:
    """UsageError at once (after `wait_s`) when another process holds an SQLite file's write
    lock, rather than a command waiting for it without a word (a server locks rows, not
    the database: nothing to wait for there)."""
    if write_locked(db, wait_s):
        raise UsageError(locked_message(db))


_COLUMNS = "sample_id, metric, verdict, text, label, reviewer, mark, created, source, selection, id"


def _label(row: tuple[Any, ...]) -> Label:
    return Label(*row)


class LabelStore(Closing):
    """The labels of the runs in one database, read and written through one connection."""

    def __init__(self, connection: Database, path: Location):
        self.connection = connection
        self.path = path
        connection.wait_for_writers(BUSY_MS)

    @classmethod
    def open(cls, path: Location) -> LabelStore:
        """The database at `path`, which must exist, for labelling (migrated if needed);
        UsageError at once when another process holds its write lock."""
        check_unlocked(path)
        return cls(open_store(path), path)

    def close(self) -> None:
        self.connection.close()

    @contextmanager
    def _write(self, doing: str) -> Iterator[Database]:
        try:
            with self.connection.transaction(doing) as db:
                yield db
        except StoreError as exc:
            if exc.kind == LOCKED:
                raise UsageError(locked_message(self.path)) from None
            raise

    def add(self, run_id: str, labels: Iterable[Label], only_changes: bool = False) -> list[Label]:
        """Store labels (all or none), each as a row of its own; those stored, with their
        ids. `only_changes`: leave out a label that is already its reviewer's current label
        of its item, read in the same transaction, so that two imports at once store it
        once."""
        stored = []
        with self._write("saving a label") as db:
            # a label unchanged in value and in how its sample was picked is not stored again
            held: dict[tuple[Any, ...], tuple[float, str]] = {}
            if only_changes:  # a review page's label is always stored: read nothing for it
                db.lock(f"labels of run {run_id}")  # another import waits until this commits
                held = {(*c.item, c.reviewer): (c.label, c.selection) for c in self.current(run_id)}
            for label in labels:
                key = (*label.item, label.reviewer)
                if only_changes and held.get(key) == (label.label, label.selection):
                    continue
                held[key] = (label.label, label.selection)
                cursor = db.execute(
                    "INSERT INTO run_labels (run_id, sample_id, metric, verdict, text, label, "
                    "reviewer, mark, created, source, selection) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "RETURNING id",
                    (
                        run_id,
                        label.sample_id,
                        label.metric,
                        label.verdict,
                        label.text,
                        label.label,
                        label.reviewer,
                        label.mark,
                        label.created,
                        label.source,
                        label.selection,
                    ),
                )
                stored.append(replace(label, id=cursor.fetchone()[0]))
        return stored

    def undo(self, run_id: str, reviewer: str) -> Label | None:
        """Delete the reviewer's latest label of the run; it, or None when there is none."""
        with self._write("undoing a label") as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM run_labels WHERE run_id = ? AND reviewer = ? "
                "ORDER BY id DESC LIMIT 1",
                (run_id, reviewer),
            ).fetchone()
            if row is None:
                return None
            undone = _label(row)
            db.execute("DELETE FROM run_labels WHERE id = ?", (undone.id,))
            db.execute(  # kept, for `runs copy` to carry the undo (localeval.history.copying)
                "INSERT INTO run_labels_undone (run_id, sample_id, metric, verdict, text, "
                "mark, label, reviewer, created, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    undone.sample_id,
                    undone.metric,
                    undone.verdict,
                    undone.text,
                    undone.mark,
                    undone.label,
                    undone.reviewer,
                    undone.created,
                    undone.source,
                ),
            )
        return undone

    def events(
        self,
        run_id: str,
        reviewer: str | None = None,
        item: tuple[str, str, int | None] | None = None,
    ) -> list[Label]:
        """Every label row of the run (of one reviewer, of one item), in the order made."""
        where, values = ["run_id = ?"], [run_id]
        if reviewer is not None:
            where.append("reviewer = ?")
            values.append(reviewer)
        if item is not None:
            sample_id, metric, verdict = item
            where += ["sample_id = ?", "metric = ?"]
            values += [sample_id, metric]
            if verdict is None:
                where.append("verdict IS NULL")
            else:
                where.append("verdict = ?")
                values.append(verdict)
        with self.connection.translating("reading labels"):
            rows = self.connection.execute(
                f"SELECT {_COLUMNS} FROM run_labels WHERE {' AND '.join(where)} ORDER BY id",
                values,
            ).fetchall()
        return [_label(row) for row in rows]

    def current(
        self,
        run_id: str,
        reviewer: str | None = None,
        item: tuple[str, str, int | None] | None = None,
    ) -> list[Label]:
        """Each reviewer's current label of each item (their latest), in the order made; of
        one reviewer, of one item."""
        latest: dict[tuple[Any, ...], Label] = {}
        for label in self.events(run_id, reviewer, item):
            key = (*label.item, label.reviewer)
            latest.pop(key, None)  # re-inserted: the dict keeps the order labels were made
            latest[key] = label
        return list(latest.values())
