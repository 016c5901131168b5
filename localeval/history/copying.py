"""Moving runs between stores (`localeval runs copy`): a laptop's file and the team's server,
either way, with every sample's scores and evidence and the reviewers' labels.

A copy is all or nothing (one transaction in the target) and can be repeated: a run the
target holds already with the same content is left as it is (labels it lacks are added,
since labels are events that either side may have made, and labels undone on the source
are undone on the target, never brought back by a later copy), and a run id the target holds
with other content is refused, never overwritten. Only complete runs are copied: an
incomplete run's content changes while it is written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.database import Database, Location
from localeval.errors import UsageError, param
from localeval.history.records import StoredRun
from localeval.history.store import RunStore

#: what a run is, column by column (not who held its lease: that is the writer's business)
RUN_FIELDS = (
    "id, created, finished, fingerprint, dataset_path, dataset_sha256, n_samples, judge_name, "
    "judge_sha256, embedder_name, embedder_sha256, prompt_version, metrics, metric_settings, "
    "thresholds, gates, localeval_version, skipped_rows, judge_settings, judge_extra, "
    "embedder_extra, shard, invalid, until_decided, software"
)
SAMPLE_FIELDS = (
    "run_id, sample_id, position, line, category, judge_calls, cached_calls, prompt_tokens, "
    "generated_tokens, seconds, inputs, retries"
)
SCORE_FIELDS = "run_id, sample_id, metric, score, undefined_reason, details"
#: a label made, as it was made (its id is the order in its own store)
LABEL_FIELDS = (
    "run_id, sample_id, metric, verdict, text, mark, label, reviewer, created, source, selection"
)
#: which label an undo took back (run_labels_undone): the label as it was made, in columns
#: that never change, so that an undo still names its label once labels gain columns
UNDONE_FIELDS = "run_id, sample_id, metric, verdict, text, mark, label, reviewer, created, source"


@dataclass
class Copied:
    """What a copy did: runs copied, runs the target held already, labels added to those
    (and undone in them), and the target copied into."""

    copied: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    labels_added: int = 0
    undos_added: int = 0
    target: Location | None = None


@dataclass(frozen=True)
class RunContent:
    """A run's rows, in a stable order: what two stores must agree on."""

    run: tuple[Any, ...]
    samples: list[tuple[Any, ...]]
    scores: list[tuple[Any, ...]]
    labels: list[tuple[Any, ...]]
    #: the labels reviewers undid (run_labels_undone), as they were made
    undone: list[tuple[Any, ...]]

    def same_as(self, other: RunContent) -> bool:
        return (self.run, self.samples, self.scores) == (other.run, other.samples, other.scores)


def runs_to_copy(source: RunStore, refs: Sequence[str]) -> list[StoredRun]:
    """The complete runs the references name in `source`, all resolved before anything is
    copied (a typo copies nothing), each once."""
    if not refs:
        raise UsageError("name at least one run to copy (see `localeval runs list`)")
    found: dict[str, StoredRun] = {}
    for ref in refs:
        run = source.resolve(ref)
        if not run.complete:
            raise UsageError(
                f"run {run.id} is not complete ({run.status}); only complete runs are copied: "
                "finish it first (re-run its command)"
            )
        found.setdefault(run.id, run)
    return list(found.values())


def copy_runs(source: RunStore, target: RunStore, runs: Sequence[StoredRun]) -> Copied:
    """Copy the runs from `source` into `target` in one transaction (see the module)."""
    if str(source.path) == str(target.path):
        raise UsageError(
            f"{param('source')} and {param('target')} are the same database ({source.path})"
        )
    contents = {}
    with source.connection.translating(f"reading runs from {source.path}"):
        for run in runs:
            contents[run.id] = read_content(source.connection, run.id)
    done = Copied(target=target.path)
    with target.connection.transaction(f"copying runs into {target.path}") as db:
        for run_id, content in contents.items():
            if not db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
                _insert(db, content)
                done.copied.append(run_id)
                continue
            held = read_content(db, run_id)
            if not held.same_as(content):
                raise UsageError(
                    f"run {run_id} is in {target.path} already, with other content; it is left "
                    "as it is, and nothing was copied"
                )
            undos = list((Counter(content.undone) - Counter(held.undone)).elements())
            _carry_undos(db, run_id, undos)
            undone = Counter(held.undone) + Counter(undos)
            missing = []
            for row in (Counter(content.labels) - Counter(held.labels)).elements():
                if undone[_identity(row)] > 0:  # undone here: never brought back
                    undone[_identity(row)] -= 1
                else:
                    missing.append(row)
            _insert_labels(db, missing)
            done.present.append(run_id)
            done.labels_added += len(missing)
            done.undos_added += len(undos)
    return done


def read_content(db: Database, run_id: str) -> RunContent:
    def rows(sql: str) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in db.execute(sql, (run_id,)).fetchall()]

    (run,) = rows(f"SELECT {RUN_FIELDS} FROM runs WHERE id = ?")
    # ordered here, not by the store: a server's collation (en-US, say) orders text
    # otherwise than SQLite and a C database do
    scores = rows(f"SELECT {SCORE_FIELDS} FROM run_scores WHERE run_id = ?")
    return RunContent(
        run,
        rows(f"SELECT {SAMPLE_FIELDS} FROM run_samples WHERE run_id = ? ORDER BY position"),
        sorted(scores, key=lambda score: (score[1], score[2])),
        rows(f"SELECT {LABEL_FIELDS} FROM run_labels WHERE run_id = ? ORDER BY id"),
        rows(f"SELECT {UNDONE_FIELDS} FROM run_labels_undone WHERE run_id = ? ORDER BY rowid"),
    )


def _insert(db: Database, content: RunContent) -> None:
    db.execute(f"INSERT INTO runs ({RUN_FIELDS}) VALUES ({_marks(RUN_FIELDS)})", content.run)
    db.executemany(
        f"INSERT INTO run_samples ({SAMPLE_FIELDS}) VALUES ({_marks(SAMPLE_FIELDS)})",
        content.samples,
    )
    db.executemany(
        f"INSERT INTO run_scores ({SCORE_FIELDS}) VALUES ({_marks(SCORE_FIELDS)})",
        content.scores,
    )
    _insert_labels(db, content.labels)
    _insert_undone(db, content.undone)


def _carry_undos(db: Database, run_id: str, undos: list[tuple[Any, ...]]) -> None:
    """Undo in the target what was undone in the source: each undone label's row, where the
    target holds it, is deleted, and the undo recorded there too."""
    if not undos:
        return
    held = db.execute(f"SELECT id, {LABEL_FIELDS} FROM run_labels WHERE run_id = ?", (run_id,))
    ids: dict[tuple[Any, ...], list[int]] = {}
    for row in held.fetchall():
        ids.setdefault(_identity(tuple(row[1:])), []).append(row[0])
    for undo in undos:
        if ids.get(undo):
            db.execute("DELETE FROM run_labels WHERE id = ?", (ids[undo].pop(),))
    _insert_undone(db, undos)


def _identity(label: tuple[Any, ...]) -> tuple[Any, ...]:
    """A label row (LABEL_FIELDS) as an undo names it (UNDONE_FIELDS)."""
    return tuple(label[_LABEL_NAMES.index(name)] for name in _UNDONE_NAMES)


_LABEL_NAMES = [name.strip() for name in LABEL_FIELDS.split(",")]
_UNDONE_NAMES = [name.strip() for name in UNDONE_FIELDS.split(",")]


def _insert_undone(db: Database, undos: list[tuple[Any, ...]]) -> None:
    if undos:
        db.executemany(
            f"INSERT INTO run_labels_undone ({UNDONE_FIELDS}) VALUES ({_marks(UNDONE_FIELDS)})",
            undos,
        )


def _insert_labels(db: Database, labels: list[tuple[Any, ...]]) -> None:
    if labels:
        db.executemany(
            f"INSERT INTO run_labels ({LABEL_FIELDS}) VALUES ({_marks(LABEL_FIELDS)})", labels
        )


def _marks(fields: str) -> str:
    return ", ".join("?" for _ in fields.split(","))
