"""A stored run's metrics corrected by the team's labels (localeval.results.corrected):
people's values of the samples labelled at random (localeval.results.person_values) against
the judge's scores on every sample, per metric and per category."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from localeval.results.corrected import RunCorrected, corrected_for
from localeval.results.person_values import PERSON_VALUE, MetricLabels, people_values
from localeval.results.summary import ScoreColumns
from localeval.runs.history import RunStore
from localeval.runs.labels import Label, LabelStore
from localeval.runs.records import StoredRun


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
