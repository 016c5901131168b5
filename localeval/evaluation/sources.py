"""A run a user names (localeval.results.refs), read from where it is: a results.json
file, or the run history. Reports and comparisons read runs through here."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from localeval.database import Location
from localeval.errors import UsageError
from localeval.history.records import StoredRun
from localeval.history.store import RunStore, open_history
from localeval.labels.corrected import stored_corrected, stored_people
from localeval.results.contract import read_results_file, run_object, run_report
from localeval.results.corrected import CorrectedSummary, corrected_for
from localeval.results.diagnosis import run_diagnosis
from localeval.results.gates import GateResult, gates_now
from localeval.results.person_values import MetricLabels
from localeval.results.refs import RunRef
from localeval.results.scores import results_file_scores
from localeval.results.summary import ScoreColumns
from localeval.results.view import RunView


def stored_report(
    store: RunStore, run: StoredRun
) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """A stored run's results.json (run_report): its header, and its samples streamed from
    the database one at a time."""
    columns = store.score_columns(run)
    corrected = stored_corrected(store, run, columns)
    gates = current_gates(run, columns, corrected.overall)
    return run_report(
        run.info,
        store.usage(run.id),
        columns,
        gates,
        lambda: store.sample_dicts(run),
        (corrected.overall, corrected.by_category),
    )


def current_gates(
    run: StoredRun, columns: ScoreColumns, corrected: Mapping[str, CorrectedSummary]
) -> list[GateResult]:
    """A finished run's gates as the labels made or carried over since its evaluation
    give them (gates_now), each read the way it was asked to (its --gate-on); gates of
    sub-scores, which no label makes, as recorded."""
    recorded = [GateResult.from_dict(gate) for gate in run.gates or []]
    return gates_now(recorded, columns.summaries(), corrected)


def report_columns(
    store: RunStore, run: StoredRun, columns: ScoreColumns | None = None
) -> ScoreColumns:
    """A stored run's scores (`columns`, when they were read already) with the sub-scores
    its report summarises beside them."""
    details = (sample["details"] for sample in store.sample_dicts(run))
    scores = columns if columns is not None else store.score_columns(run)
    return scores.with_sub_scores(run.info.metrics, details)


def header_of(store: RunStore, run: StoredRun) -> dict[str, Any]:
    """results.json without its samples, for a stored run."""
    return stored_report(store, run)[0]


def results_dict(store: RunStore, run: StoredRun) -> dict[str, Any]:
    """A stored run's whole results.json as one dict (all samples in memory: for reports;
    results.json itself is written streaming, see write_results)."""
    header, samples = stored_report(store, run)
    return {**header, "samples": list(samples)}


def stored_run_scores(
    store: RunStore,
    run: StoredRun,
    label: str,
    labelled: Mapping[str, MetricLabels] | None = None,
) -> RunView:
    """A stored run as one side of a comparison: its scores, its evidence read only for the
    samples shown, people's values of the samples labelled at random (`labelled`: what
    its labels make, when read already), no summaries."""
    usage = store.usage(run.id)
    people = labelled if labelled is not None else stored_people(store, run)
    return RunView(
        label,
        run_object(run.info, usage),
        store.score_columns(run),
        lambda s, m: store.sample_details(run.id, s, m),
        usage=usage,
        people={metric: found.counted for metric, found in people.items()},
    )


def stored_view(store: RunStore, run: StoredRun) -> RunView:
    """A stored run as `runs show`, `runs merge` and `evaluate` show it: its scores and
    their summaries with the sub-scores, overall and per category, the gates it recorded,
    what it cost, and its diagnosis when it asked for one. Its samples are not held."""
    labelled = stored_people(store, run)
    view = stored_run_scores(store, run, run.id, labelled)
    reported = report_columns(store, run, view.columns)
    diagnosis = None
    if any(s.get("diagnose") is True for s in run.info.metric_settings.values()):
        diagnosis = run_diagnosis(sample["details"] for sample in store.sample_dicts(run))
    corrected = corrected_for(view.columns, run.info.metrics, labelled, run.info.metric_settings)
    return replace(
        view,
        corrected=corrected.overall,
        corrected_by_category=corrected.by_category,
        summaries=reported.summaries(),
        by_category=reported.summaries_by_category(),
        gates=tuple(current_gates(run, view.columns, corrected.overall)),
        diagnosis=diagnosis,
    )


def load_scores(ref: RunRef, store: RunStore | None) -> RunView:
    """One side of a comparison: `latest`, `latest~N`, a run id, or a results.json path."""
    if ref.path is not None:
        if not ref.path.exists():
            raise UsageError(f"'{ref.text}': no such results file")
        return results_file_scores(ref.path)
    if store is None:
        raise UsageError(f"'{ref.text}' is not a results.json file")  # a caller bug
    run = store.resolve(ref.text)
    if not run.complete:
        raise UsageError(
            f"run {run.id} is incomplete ({run.n_done} of {run.n_samples} samples); finish it "
            "first (re-run its command) to compare it"
        )
    return stored_run_scores(store, run, ref.text)


def load_results(ref: RunRef, db_path: Location | None = None) -> dict[str, Any]:
    """The results dict a report is drawn from, for a run the user named."""
    if ref.path is not None:
        if not ref.path.exists():
            raise UsageError(f"'{ref.text}': no such results file")
        return read_results_file(ref.path)
    with open_history(db_path) as store:
        return stored_results(store, ref.text)


def stored_results(store: RunStore, ref: str) -> dict[str, Any]:
    """The results dict of the complete run `ref` names in the history (a report's run)."""
    run = store.resolve(ref)
    if not run.complete:
        raise UsageError(
            f"run {run.id} is incomplete; finish it by re-running its evaluate command"
        )
    return results_dict(store, run)
