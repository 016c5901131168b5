"""A run's labels: `localeval.RunLabels`, what `localeval labels` and the review page do.

    labels = localeval.RunLabels("latest")
    labels.import_file("labels.jsonl", random_sample=True)   # as `labels import`
    labels.export("labels.csv")                              # as `labels export -o`
    labels.corrected().overall["faithfulness"].estimate      # the mean corrected by labels

A label says what is true of one judge verdict (1: its yes is right) or of one sample's
score (1: the sample deserves to pass the gate); every label is kept in the run database
with its reviewer (localeval.labels.store). Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from localeval.api.history import DEFAULT_DB, Db, history_location
from localeval.data.file_rows import format_suffix
from localeval.database import Location, default_db_path
from localeval.errors import UsageError, param
from localeval.history.output import history_output
from localeval.labels import label_files
from localeval.labels.label_files import check_samples, export_text, read_label_rows
from localeval.labels.review_items import ReviewRun, load_review_run
from localeval.labels.store import Label, LabelStore, default_reviewer
from localeval.results.corrected import CorrectedSummary, RunCorrected
from localeval.results.output_files import OutputTarget, write_text
from localeval.results.person_values import RANDOM, MetricLabels
from localeval.results.verdicts import Verdict

#: where a run's labels are: a path, a postgresql:// URL, DEFAULT_DB
#: the formats a run's labels are written in
FORMATS = ("jsonl", "csv")


@dataclass(frozen=True)
class LabelImport:
    """What importing a labels file into a run stored and what it left out."""

    run_id: str
    #: the labels stored, with their ids
    stored: list[Label]
    #: rows that were already their reviewer's current label (not stored again)
    already: int
    #: lines of the file whose sample's verdict or score the run no longer has
    unmatched: list[int]
    #: rows left out for a later row of the same item and reviewer
    superseded: int
    #: per metric, people's values of the run after the import (localeval.labels.corrected)
    people: dict[str, MetricLabels]
    #: where the run is kept
    db: Location

    @property
    def not_random(self) -> int:
        """Labels stored of samples not said to be drawn at random: kept for calibrate,
        not counted for the mean corrected by labels."""
        return sum(label.selection != RANDOM for label in self.stored)


@dataclass(frozen=True)
class LabelsExported:
    """A run's labels written to a file."""

    run_id: str
    n_labels: int
    path: Path


class RunLabels:
    """The labels of one complete run of the history (`run`: latest, latest~N or a run id;
    `db`: the history, as for localeval.evaluate). The run is read on first use: UsageError
    for a results file, an unknown or incomplete run, or a database another process is
    writing."""

    def __init__(self, run: str = "latest", *, db: Db = DEFAULT_DB):
        self.ref = run
        self.db: Location = history_location(db) or default_db_path()

    @cached_property
    def _review(self) -> ReviewRun:
        return load_review_run(self.ref, self.db)

    @property
    def run_id(self) -> str:
        return self._review.run.id

    def current(self, reviewer: str | None = None) -> list[Label]:
        """Each reviewer's (or one reviewer's) current label of each item, in the order
        made: the run's own labels, not those carried over from earlier runs."""
        run_id = self.run_id  # the run is read first: no database is made for a typo
        with LabelStore.open(self.db) as store:
            return store.current(run_id, reviewer)

    def verdicts(self, sample_id: str) -> list[Verdict]:
        """The judge's verdicts on one sample (each with `metric`, `index`, `text`); []
        for a sample the run does not have."""
        return list(self._review.verdicts.get(sample_id, []))

    def mark(
        self,
        sample_id: str,
        metric: str,
        verdict: int | None,
        mark: str,
        reviewer: str | None = None,
    ) -> Label:
        """Label one item as the review page does: a verdict (`verdict`: its index) "right"
        or "wrong", a score (`verdict` None) "too_high", "right" or "too_low"; the label
        stored. UsageError for an item the run does not have or a mark that does not fit."""
        label = self._review.label_for(sample_id, metric, verdict, mark, _reviewer(reviewer))
        with LabelStore.open(self.db) as store:
            return store.add(self.run_id, [label])[0]

    def undo(self, reviewer: str | None = None) -> Label | None:
        """Take back the reviewer's latest label of the run; it, or None when there is none."""
        run_id = self.run_id
        with LabelStore.open(self.db) as store:
            return store.undo(run_id, _reviewer(reviewer))

    def random_sample(self, n: int) -> list[str]:
        """The ids of `n` samples drawn at random from those the judge gave verdicts on:
        the start of the review page's "label for the estimate" order, a shuffle fixed by
        the run's samples, so every reviewer (and the next run of the same samples) draws
        the same ones. Once all their verdicts are labelled they count for the mean
        corrected by labels, however the labels were made."""
        if n < 0:
            raise UsageError(f"{param('n')} {n}: must be 0 or more")
        judged = {sample_id for sample_id, found in self._review.verdicts.items() if found}
        return [s for s in self._review.estimate_order() if s in judged][:n]

    def import_file(
        self,
        path: str | os.PathLike[str],
        *,
        reviewer: str | None = None,
        random_sample: bool = False,
    ) -> LabelImport:
        """Label the run from a file's rows (JSONL, JSON or CSV), as `localeval labels
        import` does (`reviewer`: whose the rows without one are, default the OS user;
        `random_sample`: the file's samples were drawn at random, so their labels count for
        the corrected mean). DatasetError for a bad row or a sample the run does not have
        (nothing stored)."""
        file = Path(path)
        rows = read_label_rows(file)
        review = self._review
        check_samples(review, rows, file)
        who = reviewer or default_reviewer()
        # read through the module: a test lands another import between planning and storing
        plan = label_files.plan_import(review, rows, who, str(file), random_sample)
        with LabelStore.open(review.db) as store:
            stored = store.add(review.run.id, plan.labels, only_changes=True)
        already = len(plan.labels) - len(stored)
        return LabelImport(
            review.run.id,
            stored,
            already,
            plan.unmatched,
            plan.superseded,
            review.people(),
            review.db,
        )

    def text(self, format: str = "jsonl") -> str:
        """Every reviewer's current labels in the order made, as a labels file's text
        (`format`: "jsonl" or "csv"), with what each label says and whether its sample
        counts as drawn at random."""
        if format not in FORMATS:
            raise UsageError(f"{param('format')} '{format}': must be one of {', '.join(FORMATS)}")
        labels = self.current()
        return export_text(self._review, labels, as_csv=format == "csv")

    def export(
        self,
        path: str | os.PathLike[str],
        *,
        on_replace: Callable[[OutputTarget], None] | None = None,
    ) -> LabelsExported:
        """Write the labels (as `text()`) to `path`: CSV when its name ends in .csv, JSON
        lines otherwise, gzip-compressed when it ends in .gz. The path is checked before
        the run is read (UsageError where writing it would destroy something, the run
        database for one); `on_replace` hears of a file it will replace, before it does."""
        file = Path(path)
        target = history_output(file, self.db)  # the one check of every history output
        if on_replace is not None and target.replaces:
            on_replace(target)
        labels = self.current()
        as_csv = format_suffix(file)[0] == ".csv"
        write_text(target, export_text(self._review, labels, as_csv=as_csv))
        return LabelsExported(self.run_id, len(labels), file)

    def people(self) -> dict[str, MetricLabels]:
        """Per metric with labels, people's values of the run's samples (its labels and
        those carried over): which samples count for the corrected mean (`random`), which
        have verdicts still unlabelled (`missing`), and verdicts reviewers disagree on."""
        return self._review.people()

    def corrected(self) -> RunCorrected:
        """The run's means corrected by the labels, as `localeval runs show` says them:
        `.overall` per metric and `.by_category`, each a CorrectedSummary (`estimate`:
        mean and 95% interval, None until enough samples are labelled; `needed`)."""
        return self._review.corrected()


def _reviewer(given: str | None) -> str:
    if given is not None and not given.strip():
        raise UsageError(f"{param('reviewer')}: give a name (default: the OS user)")
    return given or default_reviewer()


__all__ = [
    "CorrectedSummary",
    "LabelImport",
    "LabelsExported",
    "Location",
    "RunCorrected",
    "RunLabels",
]
