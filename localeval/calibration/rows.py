"""The labelled rows of `calibrate`, read and scored: each row's label, the metric it names
(or the one asked for instead), and its score, or for a row of two answers each answer's
score and their difference (localeval.calibration.agreement turns the rows into figures).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from localeval.data import strict_json
from localeval.data.csv_rows import cell_number
from localeval.data.samples import Sample
from localeval.engine import guarded_score
from localeval.errors import DatasetError, JudgeError, UsageError
from localeval.metrics import REGISTRY, Tools, build_metric, spec

#: bench metric names that localeval scores with one of its own metrics
SCORED_AS = {"context_relevance": "context_precision"}
PAIRWISE = "pairwise"


@dataclass
class RowScore:
    """One labelled row and what the judge made of it."""

    dataset: str
    metric: str
    label: float | None
    pair_id: Any
    score: float | None = None
    chunk_scores: list[float] | None = None
    chunk_labels: list[int] | None = None
    unparseable: bool = False
    #: the judge's raw verdicts the score was made of, and their kind (for fitting maps)
    verdict_kind: str | None = None
    verdicts: list[float] | None = None
    #: a row of two answers: `score` is score B - score A, `label` the preference, and
    #: `aspects` the per-aspect preferences (correctness, completeness, ...)
    preference: bool = False
    aspects: dict[str, float] | None = None


def label_of(sample: Sample, source: str) -> float | None:
    """The row's label as a number (None when absent); DatasetError when it is not one."""
    value = sample.extra.get("label")
    if value is None:
        return None
    number = cell_number(value) if isinstance(value, str) else value
    if isinstance(number, bool) or not isinstance(number, int | float) or math.isnan(number):
        raise DatasetError(source, f"must be a number, got {value!r}", sample.line, "label")
    return float(number)


def chunk_labels_of(sample: Sample, source: str) -> list[int] | None:
    """The row's `context_labels` (a JSON array in a CSV cell), or None when absent."""
    labels = sample.extra.get("context_labels")
    if isinstance(labels, str):  # a CSV cell: a JSON array, as `contexts` is there
        with contextlib.suppress(*strict_json.DECODE_ERRORS):
            labels = strict_json.DECODER.decode(labels)
    if labels is None:
        return None
    if not isinstance(labels, list) or not all(v in (0, 1) for v in labels):
        raise DatasetError(
            source, f"must be a list of 0 and 1, got {labels!r}", sample.line, "context_labels"
        )
    return [int(v) for v in labels]


def metric_of(sample: Sample, source: str) -> str:
    """The metric a labelled row tests; DatasetError when it is missing or unknown."""
    name = sample.extra.get("metric")
    if not isinstance(name, str):
        raise DatasetError(
            source, "missing: a labelled row names the metric it tests", sample.line, "metric"
        )
    scored = SCORED_AS.get(name, name)
    if scored != PAIRWISE and scored not in REGISTRY:
        known = ", ".join(sorted([*REGISTRY, *SCORED_AS, PAIRWISE]))
        raise DatasetError(
            source, f"unknown metric '{name}' (known: {known})", sample.line, "metric"
        )
    return name


def two_answers(sample: Sample) -> tuple[Sample, Sample] | None:
    """The row as two samples, one per answer, when it carries `answer_a` and `answer_b`."""
    a, b = sample.extra.get("answer_a"), sample.extra.get("answer_b")
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return replace(sample, answer=a), replace(sample, answer=b)


def aspect_labels(sample: Sample) -> dict[str, float]:
    """The per-aspect preferences of a two-answer row: `meta`'s numeric `NAME_label` fields."""
    meta = sample.extra.get("meta")
    if not isinstance(meta, dict):
        return {}
    return {
        key.removesuffix("_label"): float(value)
        for key, value in meta.items()
        if key.endswith("_label") and isinstance(value, int | float) and not isinstance(value, bool)
    }


def _score_preference(row: RowScore, pair: tuple[Sample, Sample], name: str, tools: Tools) -> None:
    """A two-answer row: each answer scored alone, the row's score their difference."""
    metric = build_metric(name)
    a, b = (guarded_score(sample, metric, tools).score for sample in pair)
    row.preference = True
    row.score = None if a is None or b is None else b - a


def score_row(
    sample: Sample,
    tools: Tools,
    dataset: str,
    compare: Callable[[Sample, Tools], float] | None = None,
    score_with: str | None = None,
) -> RowScore:
    """Score one labelled row with the metric it names (or with `score_with`, to compare
    another metric on the same labels)."""
    name = score_with or metric_of(sample, dataset)
    row = RowScore(dataset, name, label_of(sample, dataset), sample.extra.get("pair_id"))
    row.chunk_labels = chunk_labels_of(sample, dataset)
    try:
        if name == PAIRWISE:
            if compare is None:
                raise UsageError("pairwise rows need the A/B judge, which is not available")
            row.score = compare(sample, tools)
            return row
        if (pair := two_answers(sample)) is not None:
            row.aspects = aspect_labels(sample)
            _score_preference(row, pair, SCORED_AS.get(name, name), tools)
            return row
        result = guarded_score(sample, build_metric(SCORED_AS.get(name, name)), tools)
    except JudgeError:
        row.unparseable = True
        return row
    row.score = result.score
    if row.chunk_labels is not None and "usefulness" in result.details:
        row.chunk_scores = list(result.details["usefulness"])
    metric = spec(SCORED_AS.get(name, name))
    if metric is not None and metric.verdict_kind and result.score is not None:
        row.verdict_kind = metric.verdict_kind
        row.verdicts = metric.raw_verdicts(result.details)
    return row
