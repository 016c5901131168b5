"""The run history as an object: `localeval.History`, what `localeval runs ...`, `diff`
and `report` do over it, and `localeval.diff()` / `localeval.report()`, which open one.

    with localeval.History() as history:  # or History("runs.db"), History("postgresql://...")
        history.runs(limit=5)             # as `localeval runs list`
        history.diff("latest~1", "latest").regressions(0.02)
        history.report("latest", "md", output="report.md")

Its database is opened when a call needs it: reading never creates one (NoRunHistory where
none is kept), and merging results files alone may start one. Nothing here prints: a call
returns what its command shows, or raises localeval.errors' errors. An output file is checked
before any work and handed to `on_output`, where the command line warns it replaces a file.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

from localeval.closing import Closing
from localeval.database import (
    Location,
    StoreError,
    default_db_path,
    location_of,
    parse_location,
    refuse_password,
    store_exists,
    store_file,
)
from localeval.errors import CopyFailed, SameDatabase, UsageError
from localeval.evaluation.merge import MergeOutcome, check_merge_output, merge_shards
from localeval.evaluation.sources import (
    load_results,
    load_scores,
    stored_report,
    stored_results,
    stored_view,
)
from localeval.history.cleanup import delete_runs, label_counts, plan_pruning, runs_to_delete
from localeval.history.copying import Copied, copy_runs, runs_to_copy
from localeval.history.output import history_output
from localeval.history.records import StoredRun
from localeval.history.store import RunStore, open_history
from localeval.results.contract import write_json, write_results
from localeval.results.diff import DEFAULT_MAX_DROP, DEFAULT_TOP, Comparison, compare_runs
from localeval.results.gates import GateResult, check_max_drop
from localeval.results.output_files import OutputTarget, write_text
from localeval.results.refs import RunRef
from localeval.results.view import RunView, read_run


class DefaultDb:
    """The run history `localeval evaluate` uses: $LOCALEVAL_DB, else
    .localeval/localeval.db in the working folder."""

    def __repr__(self) -> str:
        return "DEFAULT_DB"


DEFAULT_DB: Final = DefaultDb()

#: a database as a call takes it: a file, a postgresql:// URL, or the default one
Db = str | os.PathLike[str] | Location | DefaultDb

#: called with an output's target once it is checked, before any work
OnOutput = Callable[[OutputTarget], None]


def db_location(text: str) -> tuple[Location, Path | None]:
    """A run history's location as written (`--db`, $LOCALEVAL_DB), and its file (None: a
    server); a URL holding a password is refused, since it would be shown and kept."""
    location = parse_location(text)
    refuse_password(location)
    return location, store_file(location)


def history_location(db: Db) -> Location | None:
    """A db argument as the run history's location (None: the default one)."""
    if isinstance(db, DefaultDb):
        return None
    return location_of(db, "db")


@runtime_checkable
class RunResults(Protocol):
    """A run held in code (localeval.Evaluation): its id and its results.json."""

    @property
    def run_id(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


#: a run as a call takes it: held in code (an Evaluation, a results dict), or named as on
#: the command line (`latest`, `latest~N`, a run id, a results.json path)
Run = RunResults | Mapping[str, Any] | str | os.PathLike[str]


@dataclass(frozen=True)
class ShownRun:
    """A stored run as `localeval runs show` shows it: its record (`run`: settings, models,
    status), its view (summaries, intervals, gates as its labels give them now, cost), the
    gates it recorded when it was evaluated, and the results.json written (`output`)."""

    run: StoredRun
    view: RunView
    recorded_gates: list[GateResult]
    output: Path | None = None

    @property
    def gates_read_again(self) -> bool:
        """Whether a gate's metric is one people's labels correct (`localeval review`):
        `runs show` then shows the gates read again, each with the mean it read."""
        return any(gate.metric in self.view.corrected for gate in self.view.gates)


@dataclass(frozen=True)
class Deletion:
    """Runs to delete, as `confirm` is asked, or deleted (`deleted`): how many labels they
    hold; for `prune`, the runs kept because a live process is writing them (`busy`) or
    they hold labels (`labelled`, with how many); the database file's size in bytes before
    and after (None on a server)."""

    runs: list[StoredRun]
    n_labels: int
    location: Location
    busy: list[StoredRun] = field(default_factory=list)
    labelled: list[tuple[StoredRun, int]] = field(default_factory=list)
    deleted: bool = False
    size_before: int | None = None
    size_after: int | None = None


#: asked with what is about to be deleted, before anything is; deletes only if it says yes
Confirm = Callable[[Deletion], bool]


class History(Closing):
    """A run history: the runs of `localeval evaluate` kept in a database (`db`: a file, a
    postgresql:// URL, or None / DEFAULT_DB for the default one). Use it in a `with` block
    (or call close()): it keeps the database open between calls."""

    def __init__(self, db: Db | None = DEFAULT_DB):
        self._given = None if db is None else history_location(db)
        self._store: RunStore | None = None
        self._writable = False

    @functools.cached_property
    def location(self) -> Location:
        """Where the history is kept."""
        return self._given or default_db_path()

    @property
    def exists(self) -> bool:
        """Whether a run history is kept there yet (looking creates nothing)."""
        return store_exists(self.location)

    def __repr__(self) -> str:
        return f"<History {self.location}>"

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _open(self, writable: bool = False, create: bool = False) -> RunStore:
        """The database, opened once for reading (NoRunHistory where none is kept) and
        again for writing when a change needs it; `create`: started if need be."""
        if self._store is not None and (self._writable or not (writable or create)):
            return self._store
        self.close()
        if create:
            self._store = RunStore.open(self.location)
        else:
            self._store = open_history(self.location, writable)
        self._writable = writable or create
        return self._store

    def _output(
        self,
        output: str | os.PathLike[str] | None,
        on_output: OnOutput | None,
        refs: Sequence[str] = (),
        role: str = "a results file read",
    ) -> OutputTarget | None:
        if output is None:
            return None
        target = history_output(Path(output), self.location, refs, role)
        if on_output is not None:
            on_output(target)
        return target

    # --- reading -------------------------------------------------------------------------

    def runs(self, limit: int | None = None) -> list[StoredRun]:
        """The runs, newest first (by start), incomplete ones included (`limit`: the newest
        so many), as `localeval runs list` lists them."""
        if limit is not None and limit < 1:
            raise UsageError(f"limit {limit}: must be 1 or more")
        return self._open().list_runs(limit)

    def get(self, ref: str) -> StoredRun:
        """The record of the run `ref` names: a run id or its start, `latest`, `latest~N`
        (complete runs, newest first)."""
        return self._open().resolve(ref)

    def show(
        self,
        ref: str,
        *,
        output: str | os.PathLike[str] | None = None,
        on_output: OnOutput | None = None,
    ) -> ShownRun:
        """The run `ref` names as `localeval runs show` shows it, its gates read again with
        the labels as they are now; `output`: also write its results.json there."""
        target = self._output(output, on_output)
        store = self._open()
        run = store.resolve(ref)
        view = stored_view(store, run)
        if target is not None:
            write_results(target, *stored_report(store, run))
        recorded = [GateResult.from_dict(gate) for gate in run.gates or []]
        return ShownRun(run, view, recorded, None if output is None else Path(output))

    def results(self, run: Run) -> dict[str, Any]:
        """A complete run's results.json as a dict, as `localeval report -f json` gives it
        (a run held in code as it is)."""
        if isinstance(run, RunResults):
            return run.to_dict()
        if isinstance(run, Mapping):
            return dict(run)
        ref = RunRef(os.fspath(run))
        if ref.path is not None:
            return load_results(ref)
        return stored_results(self._open(), ref.text)

    def _scores(self, run: Run, store: RunStore | None) -> RunView:
        """A run as one side of a comparison (`store`: the history, if a side is in it)."""
        if isinstance(run, RunResults):
            return read_run(run.to_dict(), run.run_id)
        if isinstance(run, Mapping):
            return read_run(run)
        return load_scores(RunRef(os.fspath(run)), store)

    def diff(
        self,
        base: Run,
        new: Run,
        *,
        top: int = DEFAULT_TOP,
        max_drop: float = DEFAULT_MAX_DROP,
        output: str | os.PathLike[str] | None = None,
        on_output: OnOutput | None = None,
    ) -> Comparison:
        """Compare run `new` with run `base`, as `localeval diff` does: per metric the mean
        change over the samples both scored, its paired-bootstrap 95% interval and a
        verdict, and the `top` samples that moved most; `.regressions(max_drop)` (checked
        here, before the comparison), `.as_dict()`, written as JSON to `output`."""
        check_max_drop(max_drop)
        if top < 0:
            raise UsageError(f"top {top}: must be 0 or more")
        refs = [os.fspath(r) for r in (base, new) if isinstance(r, str | os.PathLike)]
        target = self._output(output, on_output, refs, "a results file compared")
        # the evidence of a stored run is read as the comparison is made, with the history open
        store = self._open() if any(RunRef(ref).in_history for ref in refs) else None
        comparison = compare_runs(self._scores(base, store), self._scores(new, store), top)
        if target is not None:
            write_json(target, comparison.as_dict())
        return comparison

    def report(
        self,
        run: Run,
        format: str = "html",
        *,
        baseline: Run | None = None,
        worst: int = 5,
        junit_samples: bool = False,
        output: str | os.PathLike[str] | None = None,
        on_output: OnOutput | None = None,
    ) -> str:
        """A run's report as text, as `localeval report` writes it: format "html" (one
        self-contained page), "md", "junit" or "json"; `baseline`: a run drawn beside it
        (html, md); `worst`: the worst samples listed (md); `junit_samples`: a test case per
        sample (junit); `output`: also written there."""
        from localeval.reports.render import render_report  # the page templates load here

        refs = [os.fspath(r) for r in (run, baseline) if isinstance(r, str | os.PathLike)]
        target = self._output(output, on_output, refs, "a results file reported")
        results = self.results(run)
        base = None if baseline is None else self.results(baseline)
        text = render_report(results, format, base, junit_samples, worst)
        if target is not None:
            write_text(target, text)
        return text

    # --- changing it ---------------------------------------------------------------------

    def delete(
        self,
        refs: str | Sequence[str],
        *,
        with_labels: bool = False,
        confirm: Confirm | None = None,
    ) -> Deletion:
        """Delete runs (ids or their start, `latest`, `latest~N`), all resolved first, with
        their samples and scores, as `localeval runs delete` does: a run a live process is
        writing is refused (RunInUseError), and so is a run your team labelled unless
        `with_labels`. `confirm`: asked first (None: no one is asked)."""
        store = self._open(writable=True)
        runs = runs_to_delete(store, [refs] if isinstance(refs, str) else refs, with_labels)
        found = Deletion(runs, _labels(store, runs), self.location)
        return self._deleted(store, found, with_labels, confirm)

    def prune(
        self, keep: int, *, with_labels: bool = False, confirm: Confirm | None = None
    ) -> Deletion:
        """Delete every run but the `keep` newest (by start), as `localeval runs prune`
        does, except runs a live process is writing and, unless `with_labels`, runs your
        team labelled (both said in the Deletion). `confirm`: asked first, even when there
        is nothing to delete (None: no one is asked)."""
        store = self._open(writable=True)
        plan = plan_pruning(store, keep, with_labels)
        found = Deletion(
            plan.delete, _labels(store, plan.delete), self.location, plan.busy, plan.labelled
        )
        return self._deleted(store, found, with_labels, confirm)

    def _deleted(
        self, store: RunStore, plan: Deletion, with_labels: bool, confirm: Confirm | None
    ) -> Deletion:
        asked = confirm is None or confirm(plan)
        if not plan.runs or not asked:
            return plan
        # labels made meanwhile are refused under the write lock unless with_labels
        before, after = delete_runs(store, plan.runs, with_labels)
        return replace(plan, deleted=True, size_before=before, size_after=after)

    def copy_to(self, target: Db | History | None, refs: str | Sequence[str]) -> Copied:
        """Copy complete runs (named as in this history) with their samples, scores, evidence
        and labels into another database (`target`, created or migrated if need be; None:
        the default one), all or none, as `localeval runs copy` does. Copying again changes
        nothing but labels made since; a run id the target holds with other content is
        refused. A failure says its `side` (CopyFailed)."""
        if isinstance(target, History):
            where = target.location
        else:
            where = (None if target is None else history_location(target)) or default_db_path()
        if str(where) == str(self.location):
            raise SameDatabase(f"the runs are in {where} already; copy them to another database")
        side = "source"
        try:
            reading = self._open()
            runs = runs_to_copy(reading, [refs] if isinstance(refs, str) else refs)
            side = "target"
            with RunStore.open(where) as writing:
                return copy_runs(reading, writing, runs)
        except StoreError as exc:
            failed = "source" if str(exc.location) == str(self.location) else "target"
            raise CopyFailed(str(exc), failed) from exc
        except UsageError as exc:
            raise CopyFailed(str(exc), side) from exc

    def merge(
        self,
        shards: Sequence[str],
        *,
        output: str | os.PathLike[str] | None = None,
        on_output: OnOutput | None = None,
    ) -> MergeOutcome:
        """Join the shards of one evaluation (`evaluate --shard K/N`; each a run id,
        `latest~N` or a results.json file) into one complete run of this history, as
        `localeval runs merge` does (`output`: also its results.json): `.run`, `.view`,
        `.warnings`, `.passed`. Results files alone may start the history."""
        if output is not None:
            target = check_merge_output(shards, self.location, Path(output))
            if on_output is not None:
                on_output(target)
        stored = any(RunRef(ref).in_history for ref in shards)
        store = self._open(writable=True, create=not stored)
        return merge_shards(shards, store, None if output is None else Path(output))


def _labels(store: RunStore, runs: Sequence[StoredRun]) -> int:
    return sum(label_counts(store, runs).values())


def diff(base: Run, new: Run, *, top: int = DEFAULT_TOP, db: Db = DEFAULT_DB) -> Comparison:
    """Compare run `new` with run `base`, as `localeval diff` does: per metric the mean
    change over the samples both scored, its paired-bootstrap 95% interval and a verdict;
    `.regressions(max_drop)`, `.as_dict()`. A run: an Evaluation, a results dict, or
    `latest`, `latest~N`, a run id or a results.json path (`db`: the history they are in)."""
    with History(db) as history:
        return history.diff(base, new, top=top)


def report(
    run: Run,
    format: str = "html",
    *,
    baseline: Run | None = None,
    worst: int = 5,
    junit_samples: bool = False,
    db: Db = DEFAULT_DB,
) -> str:
    """A run's report as text, as `localeval report` writes it: format "html" (one
    self-contained page), "md", "junit" or "json". Runs as for diff()."""
    with History(db) as history:
        return history.report(
            run, format, baseline=baseline, worst=worst, junit_samples=junit_samples
        )
