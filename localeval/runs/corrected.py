"""A stored run's metrics corrected by the team's labels (localeval.results.corrected):
people's values of the samples labelled at random (localeval.runs.person_values) against
the judge's scores on every sample, per metric and per category."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.results.corrected import CorrectedSummary, correct
from localeval.results.summary import NO_CATEGORY, ScoreColumns
from localeval.runs.history import RunStore
from localeval.runs.labels import Label, LabelStore
from localeval.runs.person_values import PERSON_VALUE, MetricLabels, people_values
from localeval.runs.records import StoredRun


@dataclass(frozen=True)
class RunCorrected:
    """Per metric a person's value is defined for, its corrected summary; and per category."""

    overall: Mapping[str, CorrectedSummary] = field(default_factory=dict)
    by_category: Mapping[str, Mapping[str, CorrectedSummary]] = field(default_factory=dict)


def corrected_for(
    columns: ScoreColumns, metrics: Sequence[str], labelled: Mapping[str, MetricLabels]
) -> RunCorrected:
    """The corrected summaries of a run's `metrics` that people's values are defined for."""
    overall: dict[str, CorrectedSummary] = {}
    by_category: dict[str, dict[str, CorrectedSummary]] = {}
    groups: dict[str, list[int]] = {}
    for index, category in enumerate(columns.categories):
        groups.setdefault(category or NO_CATEGORY, []).append(index)
    for metric in metrics:
        if metric not in PERSON_VALUE or metric not in columns.scores:
            continue
        found = labelled.get(metric, MetricLabels(metric))
        left_out = (found.n_chosen, len(found.missing))
        scores = columns.scores[metric]
        overall[metric] = correct(scores, columns.sample_ids, found.counted, left_out)
        for category, members in sorted(groups.items()):
            ids = [columns.sample_ids[i] for i in members]
            entry = correct(scores[members], ids, found.counted)
            by_category.setdefault(category, {})[metric] = entry
    return RunCorrected(overall, by_category)


def run_labels(store: RunStore, run: StoredRun) -> list[Label]:
    """Each reviewer's current label of each item of the run."""
    return LabelStore(store.connection, store.path).current(run.id)


def stored_corrected(
    store: RunStore,
    run: StoredRun,
    columns: ScoreColumns,
    samples: Iterable[Mapping[str, Any]] | None = None,
) -> RunCorrected:
    """A stored run's corrected summaries (`samples`: its results.json samples when read
    already; read from the store when its labels need them)."""
    if not any(metric in PERSON_VALUE for metric in run.info.metrics):
        return RunCorrected()
    labels = run_labels(store, run)
    found: dict[str, MetricLabels] = {}
    if labels:
        found = people_values(samples or store.sample_dicts(run), labels)
    return corrected_for(columns, run.info.metrics, found)
