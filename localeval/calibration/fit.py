"""Fitting a judge's calibration maps from labelled rows (`localeval calibrate --fit`), and
measuring them only on rows they were not fitted on.

Per kind of verdict, the rows of every labelled dataset that scores that kind (their raw
verdicts and label) are pooled. The map's error is measured by leaving one dataset out at
a time: fitted on the others, it predicts the held-out dataset's scores, and the expected
calibration error (ECE) and the reliability diagram are read from those predictions
alone. A kind with a single dataset is measured by five folds of its pairs (rows sharing
a pair_id stay together). The map that is kept is then fitted on every row.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.calibration.rows import RowScore
from localeval.verdict_maps import (
    ReliabilityBin,
    VerdictMap,
    expected_calibration_error,
    fit_map,
    reliability,
    with_measurement,
)

FOLDS = 5
#: labelled rows of a kind below which folds of one dataset cannot keep a map (calibrate
#: --labels): ten-bin errors measured on fewer rows than that are mostly noise
MIN_FOLDED_ROWS = 20


@dataclass(frozen=True)
class HeldOut:
    """One held-out part: its rows, and the ECE before and after the map fitted without it."""

    name: str
    rows: int
    ece_raw: float
    ece: float


@dataclass
class KindFit:
    """The map of one kind of verdict and what was measured of it."""

    kind: str
    map: VerdictMap
    held_out: list[HeldOut] = field(default_factory=list)
    #: over every held-out prediction together
    ece_raw: float = float("nan")
    ece: float = float("nan")
    bins: list[ReliabilityBin] = field(default_factory=list)
    #: how the held-out parts were made: "by dataset" or "5 folds of <dataset>"
    scheme: str = "by dataset"
    #: what one verdict measured is: a labelled row's, or one chunk's of a row ("chunks")
    unit: str = "rows"
    #: whether folds of one dataset are enough to keep the map: labels of the team's own
    #: data (calibrate --labels), where the map is meant for that data alone
    folds_suffice: bool = False

    @property
    def kept(self) -> bool:
        """Whether the map is worth applying: it lowered the error on labelled datasets it was
        not fitted on, over them all and on most of them one by one."""
        return self.not_kept_because() is None

    def not_kept_because(self) -> str | None:
        """Why the map is not worth applying, or None when it is. Folds of a single dataset
        do not count: the 1.5B judge's relevancy map fitted on WikiEval alone lowered its
        held-out error there (0.33 -> 0.08) yet halved correct answers' scores on the bundled
        demo. Nor does the pooled error alone: errors of opposite sign in different datasets
        cancel there, so a map that made three of four datasets worse lowered it."""
        if self.scheme != "by dataset" and not self.folds_suffice:
            return "it was measured on one labelled dataset only"
        rows = sum(part.rows for part in self.held_out)
        if self.scheme != "by dataset" and rows < MIN_FOLDED_ROWS:
            return f"it was measured on {rows} labelled {self.unit}; {MIN_FOLDED_ROWS} are needed"
        if self.map.a <= 0:  # labels that the judge's P(Yes) does not rank the right way
            return "it would turn the judge's order of verdicts round (a <= 0)"
        parts = "datasets" if self.scheme == "by dataset" else "folds"
        if not self.ece < self.ece_raw:
            return f"on held-out {parts} it did not lower the error"
        better = sum(part.ece < part.ece_raw for part in self.held_out)
        if 2 * better <= len(self.held_out):
            held = len(self.held_out)
            return f"it lowered the error on only {better} of the {held} held-out {parts}"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "kept": self.kept,
            "map": self.map.record(),
            "scheme": self.scheme,
            "ece_raw": round(self.ece_raw, 4),
            "ece": round(self.ece, 4),
            "held_out": [vars(h) for h in self.held_out],
            "unit": self.unit,
        }


Row = tuple[list[float], float]
#: what groups a chunk-labelled row's chunks (in place of a pair id)
CHUNKS = "chunks of row"


def usable_rows(rows: Sequence[RowScore]) -> dict[str, dict[str, list[tuple[Any, Row]]]]:
    """kind -> dataset -> [(pair_id, (raw verdicts, label))], for rows with labels in [0, 1]
    and for each chunk of rows with chunk labels."""
    found: dict[str, dict[str, list[tuple[Any, Row]]]] = defaultdict(lambda: defaultdict(list))
    for number, row in enumerate(rows):
        if row.verdict_kind is None or not row.verdicts:
            continue
        chunks = row.chunk_labels
        if chunks is not None and len(chunks) == len(row.verdicts):
            # a chunk-labelled row: each chunk's verdict against its own label, the row's
            # chunks kept in one fold
            for verdict, label in zip(row.verdicts, chunks, strict=True):
                found[row.verdict_kind][row.dataset].append(((CHUNKS, number), ([verdict], label)))
            continue
        if row.label is not None and 0.0 <= row.label <= 1.0:
            found[row.verdict_kind][row.dataset].append((row.pair_id, (row.verdicts, row.label)))
    return {kind: dict(by_dataset) for kind, by_dataset in found.items()}


def _score(fitted: VerdictMap | None, verdicts: Sequence[float]) -> float:
    values = verdicts if fitted is None else [fitted.apply(p) for p in verdicts]
    return float(np.mean(values))


def _folds(rows: list[tuple[Any, Row]]) -> list[list[int]]:
    """Row indices in FOLDS parts, rows sharing a pair_id in the same part."""
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, (pair, _) in enumerate(rows):
        groups[pair if pair is not None else ("row", i)].append(i)
    parts: list[list[int]] = [[] for _ in range(FOLDS)]
    for n, members in enumerate(groups.values()):
        parts[n % FOLDS] += members
    return [p for p in parts if p]


#: a held-out part: its name, the rows the map is fitted on, and the rows it is measured on
Part = tuple[str, list[Row], list[Row]]


def _parts(by_dataset: dict[str, list[tuple[Any, Row]]]) -> tuple[list[Part], str]:
    """The held-out parts, each dataset left out in turn (or folds of the only one), and
    how they were made."""
    names = sorted(by_dataset)
    if len(names) > 1:
        parts = [
            (
                name,
                [r for n in names if n != name for _, r in by_dataset[n]],
                [r for _, r in by_dataset[name]],
            )
            for name in names
        ]
        return parts, "by dataset"
    (name,) = names
    rows = by_dataset[name]
    parts = []
    for number, held in enumerate(_folds(rows), start=1):
        keep = set(held)
        parts.append(
            (
                f"{name} fold {number}",
                [r for i, (_, r) in enumerate(rows) if i not in keep],
                [r for i, (_, r) in enumerate(rows) if i in keep],
            )
        )
    return parts, f"{len(parts)} folds of {name}"


def _held_out(
    kind: str, parts: list[Part]
) -> tuple[list[HeldOut], list[float], list[float], list[float]]:
    """Each part's errors before and after the map fitted without it, and over them all
    the calibrated and the raw predictions with their labels."""
    held_out: list[HeldOut] = []
    predicted: list[float] = []
    raw: list[float] = []
    labels: list[float] = []
    for name, train, test in parts:
        try:
            fitted = fit_map(kind, train)
        except ValueError:
            continue  # what is left to fit on holds one label only: says nothing of a map
        scores = [_score(fitted, verdicts) for verdicts, _ in test]
        plain = [_score(None, verdicts) for verdicts, _ in test]
        truth = [label for _, label in test]
        held_out.append(
            HeldOut(
                name,
                len(test),
                expected_calibration_error(plain, truth),
                expected_calibration_error(scores, truth),
            )
        )
        predicted += scores
        raw += plain
        labels += truth
    return held_out, predicted, raw, labels


def fit_kind(
    kind: str, by_dataset: dict[str, list[tuple[Any, Row]]], folds_suffice: bool = False
) -> KindFit:
    """The map for one kind, measured on held-out datasets (or folds of the only one)."""
    names = sorted(by_dataset)
    parts, scheme = _parts(by_dataset)
    held_out, predicted, raw, labels = _held_out(kind, parts)
    every = [r for name in names for _, r in by_dataset[name]]
    # a chunk verdict is one of its row's chunks (usable_rows groups them by CHUNKS)
    chunked = any(isinstance(p, tuple) and p[0] == CHUNKS for n in names for p, _ in by_dataset[n])
    unit = "chunks" if chunked else "rows"
    described = ", ".join(f"{name} ({len(by_dataset[name])} {unit})" for name in names)
    final = fit_map(kind, every, fitted_on=described)
    ece = expected_calibration_error(predicted, labels)
    bins = reliability(predicted, labels)
    return KindFit(
        kind,
        with_measurement(final, ece, bins),
        held_out,
        expected_calibration_error(raw, labels),
        ece,
        bins,
        scheme,
        unit,
        folds_suffice,
    )


def fit_maps(rows: Sequence[RowScore], folds_suffice: bool = False) -> dict[str, KindFit]:
    """A map per kind of verdict the rows hold (kinds whose labels are all alike are left
    out: they cannot say where a verdict should sit); `folds_suffice`: see KindFit."""
    fits: dict[str, KindFit] = {}
    for kind, by_dataset in sorted(usable_rows(rows).items()):
        labels = {label for rows_ in by_dataset.values() for _, (_, label) in rows_}
        if len(labels) > 1 and sum(len(r) for r in by_dataset.values()) >= 4:
            fits[kind] = fit_kind(kind, by_dataset, folds_suffice)
    return fits
