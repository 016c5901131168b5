"""Labels as a file, so a team keeps them in git and brings them to the next run of the same
samples: `localeval labels export` and `labels import`.

One JSON object per line, in the labelled-row form of ../shared/bench: `sample_id` (or
`id`), `metric`, `label` in [0, 1] and, for a verdict, its `text` (the statement, the
chunk, the answer); a row without `text` labels the sample's score on the metric. Export
adds what the label means in words (`label_kind`), the reviewer's `mark`, `reviewer` and
`time`. Import matches each row to the run by sample id and the verdict's text: a row
whose sample or text the run does not have is counted and left out, and a row that is
already the reviewer's current label of its item is not stored again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from localeval.data.file_rows import file_rows
from localeval.errors import DatasetError, UsageError
from localeval.results.verdicts import MEANINGS
from localeval.runs.labels import SCORE_MARKS, VERDICT_MARKS, Label
from localeval.runs.review_items import ReviewRun


def label_kind(review: ReviewRun, label: Label) -> str:
    """What a label of 1 says, in words."""
    if label.verdict is None:
        return f"1: the sample deserves to pass its {label.metric} gate"
    found = review.verdict(label.sample_id, label.metric, label.verdict)
    if found is None:
        return "1: the judge's yes is right"
    return f"1: the {found.noun} {MEANINGS.get(found.kind, 'gets a yes')}"


def export_rows(review: ReviewRun, labels: Sequence[Label]) -> list[dict[str, Any]]:
    """Each label as a row of the file, in the order they were made."""
    rows = []
    for label in labels:
        row: dict[str, Any] = {"sample_id": label.sample_id, "metric": label.metric}
        if label.verdict is not None:
            row["text"] = label.text
        row |= {
            "label": label.label,
            "label_kind": label_kind(review, label),
            "mark": label.mark,
            "reviewer": label.reviewer,
            "time": label.created,
        }
        rows.append(row)
    return rows


def export_text(review: ReviewRun, labels: Sequence[Label]) -> str:
    return "".join(
        json.dumps(row, ensure_ascii=False) + "\n" for row in export_rows(review, labels)
    )


@dataclass(frozen=True)
class LabelRow:
    """One row of a labels file, checked."""

    line: int
    sample_id: str
    metric: str
    text: str | None
    label: float
    reviewer: str | None
    mark: str | None
    time: str | None


def _string(row: dict[str, Any], name: str, path: Path, line: int) -> str | None:
    value = row.get(name)
    if value is not None and not isinstance(value, str):
        raise DatasetError(str(path), f"must be a string, got {value!r}", line, name)
    return value


def read_label_rows(path: Path) -> list[LabelRow]:
    """The rows of a labels file; DatasetError naming the line and field of the first bad
    one."""
    _, rows = file_rows(path)
    found = []
    for line, row in rows:
        if isinstance(row, DatasetError):
            raise row
        if not isinstance(row, dict):
            raise DatasetError(str(path), "a label row is a JSON object", line)
        sample_id = _string(row, "sample_id", path, line) or _string(row, "id", path, line)
        if not sample_id:
            raise DatasetError(str(path), "missing: the sample's id", line, "sample_id")
        metric = _string(row, "metric", path, line)
        if not metric:
            raise DatasetError(str(path), "missing: the metric labelled", line, "metric")
        value = row.get("label")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            problem = f"must be a number in [0, 1], got {value!r}"
            raise DatasetError(str(path), problem, line, "label")
        mark = _string(row, "mark", path, line)
        if mark is not None and mark not in {*VERDICT_MARKS, *SCORE_MARKS}:
            raise DatasetError(str(path), f"unknown mark {mark!r}", line, "mark")
        found.append(
            LabelRow(
                line,
                sample_id,
                metric,
                _string(row, "text", path, line),
                float(value),
                _string(row, "reviewer", path, line),
                mark,
                _string(row, "time", path, line),
            )
        )
    return found


@dataclass(frozen=True)
class ImportPlan:
    """What importing a file into a run would store, and what it leaves out."""

    labels: list[Label]
    #: rows already the reviewer's current label of their item
    already: int
    #: rows whose sample or verdict text the run does not have (line numbers)
    unmatched: list[int]


def plan_import(
    review: ReviewRun,
    rows: Sequence[LabelRow],
    current: Sequence[Label],
    reviewer: str,
    source: str,
) -> ImportPlan:
    """The labels to store for `rows` (a row without a reviewer is `reviewer`'s)."""
    held = {(*c.item, c.reviewer): c.label for c in current}
    labels: list[Label] = []
    already = 0
    unmatched: list[int] = []
    for row in rows:
        found, verdict = review.match(row.sample_id, row.metric, row.text)
        if not found:
            unmatched.append(row.line)
            continue
        who = row.reviewer or reviewer
        key = (row.sample_id, row.metric, verdict, who)
        if held.get(key) == row.label:
            already += 1
            continue
        held[key] = row.label
        label = Label(row.sample_id, row.metric, verdict, row.text or "", row.label, who)
        labels.append(
            replace(
                label,
                mark=_mark_here(review, label, row.mark),
                created=row.time or label.created,
                source=source,
            )
        )
    return ImportPlan(labels, already, unmatched)


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
