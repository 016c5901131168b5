"""A stored run's metrics corrected by the team's labels (localeval.results.corrected):
people's values of the samples labelled at random (localeval.results.person_values) against
the judge's scores on every sample, per metric and per category."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from localeval.history.records import StoredRun
from localeval.history.store import RunStore
from localeval.labels.carried import carried_labels, labelled_runs
from localeval.labels.store import Label, LabelStore
from localeval.results.corrected import RunCorrected, corrected_for
from localeval.results.person_values import PERSON_VALUE, MetricLabels, people_values
from localeval.results.summary import ScoreColumns


def run_labels(
    store: RunStore, run: StoredRun, samples: Sequence[Mapping[str, Any]] | None = None
) -> list[Label]:
    """Each reviewer's current label of each item of the run, and the labels of earlier
    runs that carry over to it (localeval.labels.carried; `samples`: its results.json
    samples, read when not given)."""
    own = LabelStore(store.connection, store.path).current(run.id)
    if not labelled_runs(store, run):
        return own
    found = list(samples) if samples is not None else list(store.sample_dicts(run))
    return own + carried_labels(store, run, found)


def stored_corrected(
    store: RunStore,
    run: StoredRun,
    columns: ScoreColumns,
    samples: Sequence[Mapping[str, Any]] | None = None,
) -> RunCorrected:
    """A stored run's corrected summaries (`samples`: its results.json samples when read
    already; read from the store when its labels need them)."""
    if not any(metric in PERSON_VALUE for metric in run.info.metrics):
        return RunCorrected()
    return corrected_for(
        columns, run.info.metrics, stored_people(store, run, samples), run.info.metric_settings
    )


def stored_people(
    store: RunStore, run: StoredRun, samples: Sequence[Mapping[str, Any]] | None = None
) -> dict[str, MetricLabels]:
    """Per metric with labels, people's values of a stored run's samples (its own labels
    and those carried over); {} without a label in the database."""
    if not any(metric in PERSON_VALUE for metric in run.info.metrics):
        return {}
    if not store_has_labels(store):
        return {}
    read = list(samples) if samples is not None else list(store.sample_dicts(run))
    labels = run_labels(store, run, read)
    return people_values(read, labels) if labels else {}


def store_has_labels(store: RunStore) -> bool:
    """Whether any run of the database has a label (most have none: nothing to read)."""
    with store.connection.translating("reading labels"):
        return store.connection.execute("SELECT 1 FROM run_labels LIMIT 1").fetchone() is not None
