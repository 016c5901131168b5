"""Labels as a file, so a team keeps them in git and brings them to the next run of the same
samples: `localeval labels export` and `labels import`.

One JSON object per line (or a CSV file of the same columns), in the labelled-row form of
../shared/bench: `sample_id` (or `id`), `metric`, `label` in [0, 1] and, for a verdict,
`verdict` (its number among the metric's verdicts of the sample, the id the run database
and the review page know it by) and its `text` (the statement, the chunk, the answer); a
row with neither labels the sample's score on the metric. Export adds what the label means
in words (`label_kind`), the reviewer's `mark`, `reviewer` and `time`.

Import matches a verdict row to the run's verdict of its number when that verdict says the
same text; where it says another (the sample changed and its verdicts moved) or the row has
no number (a bench file), to the first verdict of the metric with the row's text that no
other row of the reviewer took, so two verdicts of the same text keep a label each. A row
whose sample or text the run does not have is counted and left out; of two rows of one
item and reviewer the later is kept; a row that is already the reviewer's current label of
its item is not stored again (checked as the labels are written: LabelStore.add).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from localeval.data.csv_rows import cell_number
from localeval.data.file_rows import file_rows
from localeval.data.samples import NUL, NUL_PROBLEM
from localeval.errors import DatasetError, UsageError
from localeval.labels.review_items import ReviewRun
from localeval.labels.store import SCORE_MARKS, VERDICT_MARKS, Label
from localeval.results.person_values import CHOSEN, RANDOM, SELECTIONS, people_values
from localeval.results.verdicts import MEANINGS

#: the columns of an exported file, in order (a CSV file's header)
COLUMNS = (
    "sample_id",
    "metric",
    "verdict",
    "text",
    "label",
    "label_kind",
    "mark",
    "reviewer",
    "time",
    "selection",
)


def label_kind(review: ReviewRun, label: Label) -> str:
    """What a label of 1 says, in words."""
    if label.verdict is None:
        return f"1: the sample deserves to pass its {label.metric} gate"
    found = review.verdict(label.sample_id, label.metric, label.verdict)
    if found is None:
        return "1: the judge's yes is right"
    return f"1: the {found.noun} {MEANINGS.get(found.kind, 'gets a yes')}"


def export_rows(review: ReviewRun, labels: Sequence[Label]) -> list[dict[str, Any]]:
    """Each label as a row of the file, in the order they were made; its `selection`
    random where its sample counts for the estimate (the complete start of the estimate
    order, or imported as random), so that an import elsewhere counts it too."""
    found = people_values(review.samples, labels)
    counted = {s for entry in found.values() for s in entry.random}
    rows = []
    for label in labels:
        row: dict[str, Any] = {"sample_id": label.sample_id, "metric": label.metric}
        if label.verdict is not None:
            row |= {"verdict": label.verdict, "text": label.text}
        row |= {
            "label": label.label,
            "label_kind": label_kind(review, label),
            "mark": label.mark,
            "reviewer": label.reviewer,
            "time": label.created,
            # whether the sample was picked at random: the corrected estimate counts it only then
            "selection": RANDOM if label.sample_id in counted else label.selection,
        }
        rows.append(row)
    return rows


def export_text(review: ReviewRun, labels: Sequence[Label], as_csv: bool = False) -> str:
    """The labels as JSON lines, or as CSV (a score's `verdict` and `text` cells empty)."""
    rows = export_rows(review, labels)
    if not as_csv:
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@dataclass(frozen=True)
class LabelRow:
    """One row of a labels file, checked."""

    line: int
    sample_id: str
    metric: str
    #: the verdict's number and text; both None: the row labels the sample's score
    verdict: int | None
    text: str | None
    label: float
    reviewer: str | None
    mark: str | None
    time: str | None
    #: how the row's sample was picked (SELECTIONS); None: not said
    selection: str | None = None

    @property
    def of_verdict(self) -> bool:
        return self.verdict is not None or self.text is not None


def _string(row: dict[str, Any], name: str, path: Path, line: int) -> str | None:
    value = row.get(name)
    if value is not None and not isinstance(value, str):
        raise DatasetError(str(path), f"must be a string, got {value!r}", line, name)
    if value is not None and NUL in value:
        raise DatasetError(str(path), NUL_PROBLEM, line, name)
    return value


def _csv_numbers(row: dict[str, Any]) -> dict[str, Any]:
    """A CSV row's `label` and `verdict` as numbers where their cells hold one (every CSV
    value is a string); a verdict's empty `text` cell as ""."""
    row = dict(row)
    for name, kind in (("label", float), ("verdict", int)):
        if isinstance(row.get(name), str):
            row[name] = cell_number(row[name], kind)
    if "verdict" in row:
        row.setdefault("text", "")
    return row


def _label_row(row: dict[str, Any], path: Path, line: int) -> LabelRow:
    sample_id = _string(row, "sample_id", path, line) or _string(row, "id", path, line)
    if not sample_id:
        raise DatasetError(str(path), "missing: the sample's id", line, "sample_id")
    metric = _string(row, "metric", path, line)
    if not metric:
        raise DatasetError(str(path), "missing: the metric labelled", line, "metric")
    verdict = row.get("verdict")
    if verdict is not None and (
        isinstance(verdict, bool) or not isinstance(verdict, int) or verdict < 0
    ):
        problem = f"must be the verdict's number (a whole number from 0), got {verdict!r}"
        raise DatasetError(str(path), problem, line, "verdict")
    value = row.get("label")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        problem = f"must be a number in [0, 1], got {value!r}"
        raise DatasetError(str(path), problem, line, "label")
    mark = _string(row, "mark", path, line)
    if mark is not None and mark not in {*VERDICT_MARKS, *SCORE_MARKS}:
        raise DatasetError(str(path), f"unknown mark {mark!r}", line, "mark")
    text = _string(row, "text", path, line)
    reviewer, time = _string(row, "reviewer", path, line), _string(row, "time", path, line)
    selection = _string(row, "selection", path, line) or None
    if selection is not None and selection not in SELECTIONS:
        problem = f"must be {' or '.join(SELECTIONS)}, got {selection!r}"
        raise DatasetError(str(path), problem, line, "selection")
    return LabelRow(
        line, sample_id, metric, verdict, text, float(value), reviewer, mark, time, selection
    )


def read_label_rows(path: Path) -> list[LabelRow]:
    """The rows of a labels file (JSONL, JSON or CSV); DatasetError naming the line and
    field of the first bad one."""
    kind, rows = file_rows(path)
    found = []
    for line, row in rows:
        if isinstance(row, DatasetError):
            raise row
        if not isinstance(row, dict):
            raise DatasetError(str(path), "a label row is a JSON object", line)
        found.append(_label_row(_csv_numbers(row) if kind == "csv" else row, path, line))
    return found


@dataclass(frozen=True)
class ImportPlan:
    """What importing a file into a run would store, and what it leaves out."""

    labels: list[Label]
    #: rows whose sample or verdict the run does not have (line numbers)
    unmatched: list[int]
    #: rows left out for a later row of the same item and reviewer
    superseded: int = 0


#: (sample id, metric, verdict number, reviewer): one item as one reviewer labels it
_Key = tuple[str, str, int | None, str]


def _named_item(review: ReviewRun, row: LabelRow) -> bool:
    """Whether the run has the item the row names: the sample's judged score, or the
    verdict of the row's number with the row's text (any text when the row gives none)."""
    if not row.of_verdict:
        return row.metric in review.judged_metrics(row.sample_id)
    if row.verdict is None:
        return False
    found = review.verdict(row.sample_id, row.metric, row.verdict)
    return found is not None and (row.text is None or found.text == row.text)


def _by_text(review: ReviewRun, row: LabelRow, who: str, taken: set[_Key]) -> int | None:
    """The number of the first verdict of the row's metric saying the row's text that no
    other row of the reviewer took. Where rows took them all, the last of them: the row
    labels again an item the file labelled, and the later row counts, as for rows naming
    a verdict by number. None when no verdict says the text."""
    labelled_again = None
    for found in review.verdicts.get(row.sample_id, []):
        if found.metric != row.metric or found.text != row.text:
            continue
        if (row.sample_id, row.metric, found.index, who) not in taken:
            return found.index
        labelled_again = found.index
    return labelled_again


def check_samples(review: ReviewRun, rows: Sequence[LabelRow], path: Path) -> None:
    """DatasetError naming the first row whose sample the run does not have: a file of
    another dataset's labels, or ids that do not match, would otherwise store nothing
    of it without a word."""
    for row in rows:
        if review.sample(row.sample_id) is None:
            raise DatasetError(
                str(path),
                f"run {review.run.id} has no sample '{row.sample_id}'; nothing was imported",
                row.line,
                "sample_id",
            )


def plan_import(
    review: ReviewRun,
    rows: Sequence[LabelRow],
    reviewer: str,
    source: str,
    random_sample: bool = False,
) -> ImportPlan:
    """The labels to store for `rows` (a row without a reviewer is `reviewer`'s), in the
    file's order: first each row whose verdict number still holds its text takes that
    verdict, then the other verdict rows are matched by their text. `random_sample`: the
    file's samples were drawn at random (else each row's `selection`, chosen when none)."""
    items: list[_Key | None] = [None] * len(rows)
    for n, row in enumerate(rows):
        if _named_item(review, row):
            items[n] = (row.sample_id, row.metric, row.verdict, row.reviewer or reviewer)
    taken = {key for key in items if key is not None}
    for n, row in enumerate(rows):
        who = row.reviewer or reviewer
        if items[n] is None and row.text is not None:
            index = _by_text(review, row, who, taken)
            if index is not None:
                items[n] = (row.sample_id, row.metric, index, who)
                taken.add(items[n])
    last = {key: n for n, key in enumerate(items) if key is not None}
    labels = [
        _label(review, rows[n], key, source, random_sample)
        for n, key in enumerate(items)
        if key is not None and last[key] == n
    ]
    unmatched = [row.line for row, key in zip(rows, items, strict=True) if key is None]
    superseded = len(rows) - len(unmatched) - len(labels)
    return ImportPlan(labels, unmatched, superseded)


def _label(review: ReviewRun, row: LabelRow, key: _Key, source: str, random_sample: bool) -> Label:
    sample_id, metric, verdict, who = key
    found = review.verdict(sample_id, metric, verdict) if verdict is not None else None
    label = Label(sample_id, metric, verdict, found.text if found else "", row.label, who)
    return replace(
        label,
        mark=_mark_here(review, label, row.mark),
        created=row.time or label.created,
        source=source,
        selection=RANDOM if random_sample else row.selection or CHOSEN,
    )


def _mark_here(review: ReviewRun, label: Label, mark: str | None) -> str | None:
    """The row's mark where it says the same of this run's item as its label (a verdict's
    "right" is only right where this run's judge said the same); else None."""
    if mark is None:
        return None
    try:
        said = review.label_for(label.sample_id, label.metric, label.verdict, mark, "")
    except UsageError:
        return None
    return mark if said.label == label.label else None
