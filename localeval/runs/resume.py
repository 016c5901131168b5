"""A run as `localeval evaluate` does it: stream the samples through the metrics into the
run history, continuing an interrupted run of the same evaluation instead of starting over.

Memory stays flat in the number of samples: the data file is read one row at a time, each
sample's results go to the database as soon as they exist, and summaries and results.json
are read back from the database afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from localeval.backends.files import sha256_file
from localeval.cli.progress import Progress
from localeval.data.samples import InvalidRowCounter, OnInvalid, OnWarning, read_samples
from localeval.engine.runner import RunInfo, score_sample
from localeval.errors import DatasetError, UsageError
from localeval.metrics import Metric, Tools
from localeval.results.contract import run_header
from localeval.results.diff import RunScores, results_file_scores
from localeval.runs.history import LATEST, RunStore, StoredRun, fingerprint

#: `--resume` without a run id: continue this evaluation's interrupted run, which must exist
RESUME_MATCHING = "matching"


@dataclass(frozen=True)
class DatasetScan:
    """A data file checked in full: its rows are valid (or skipped), how many valid rows there
    are, its content hash."""

    path: Path
    n_samples: int
    sha256: str


def scan_dataset(
    path: Path, on_invalid: OnInvalid | None = None, on_warning: OnWarning | None = None
) -> DatasetScan:
    """Validate every row in one streaming pass, before any model loads. Without
    `on_invalid` the first invalid row raises; with it, invalid rows go there."""
    counter = InvalidRowCounter(on_invalid)
    count = sum(1 for _ in read_samples(path, counter.handler(), on_warning))
    if not count:
        raise counter.no_samples(path)
    return DatasetScan(path, count, sha256_file(path))


def check_resume_target(
    store: RunStore, ref: str, dataset: DatasetScan, metrics: list[str]
) -> StoredRun:
    """The run `--resume RUN` names, checked as far as possible before the models load."""
    run = store.resolve(ref)
    if run.complete:
        raise UsageError(f"run {run.id} is already complete; there is nothing to resume")
    if run.info.dataset_sha256 != dataset.sha256:
        raise UsageError(
            f"run {run.id} evaluated a different dataset ({run.info.dataset}, sha256 "
            f"{run.info.dataset_sha256[:12] if run.info.dataset_sha256 else '?'}); "
            f"{dataset.path} has sha256 {dataset.sha256[:12]}"
        )
    if run.info.metrics != metrics:
        raise UsageError(
            f"run {run.id} computed {', '.join(run.info.metrics)}; this command asks for "
            f"{', '.join(metrics)}"
        )
    return run


def choose_run(
    store: RunStore,
    info: RunInfo,
    n_samples: int,
    thresholds: Mapping[str, float],
    resume: str | None,
    new_run: bool,
    target: StoredRun | None,
) -> StoredRun:
    """The run to record into: the one asked for, an interrupted run of the same evaluation,
    or a new one. Says on stderr which it is."""
    same = None if new_run else store.find_resumable(fingerprint(info))
    if target is not None:
        if target.fingerprint != fingerprint(info):
            raise UsageError(
                f"run {target.id} is not the same evaluation as this command (its judge, "
                "embedder, prompt version or metric settings differ); use --no-resume to start "
                "a new run"
            )
        same = target
    elif resume == RESUME_MATCHING and same is None:
        raise UsageError(
            "no interrupted run of this evaluation (same data, models, prompts and metrics) "
            "to resume; run without --resume to start one"
        )
    if same is None:
        return store.start(info, n_samples, thresholds)
    store.set_thresholds(same.id, thresholds)
    click.echo(
        f"Resuming run {same.id}: {same.n_done} of {same.n_samples} samples were scored "
        f"before it stopped. (--no-resume starts a new run.)",
        err=True,
    )
    return same


def record_samples(
    store: RunStore,
    run: StoredRun,
    data: Path,
    metrics: Sequence[Metric],
    tools: Tools,
    show_progress: bool,
    skip_invalid: bool = False,
) -> None:
    """Score the samples the run lacks, storing each as it finishes (leaving out the invalid
    rows, which scan_dataset reported, when `skip_invalid`)."""
    progress = Progress(run.n_samples, "Evaluating", enabled=show_progress, resumed=run.n_done)
    rows = read_samples(data, _ignore if skip_invalid else None)
    try:
        for position, sample in enumerate(rows):
            if run.n_done and store.has_sample(run.id, sample.sample_id):
                continue  # scored before the run was interrupted
            store.record_sample(run.id, position, score_sample(sample, metrics, tools))
            progress.advance()
    except BaseException:
        progress.close()
        _say_saved(store, run)
        raise
    progress.close()


def _ignore(_error: DatasetError) -> None:
    """Invalid rows on the second pass: already reported by the scan."""


def _say_saved(store: RunStore, run: StoredRun) -> None:
    """After a failure or Ctrl-C: what is kept, and how to go on."""
    try:
        done = store.get(run.id).n_done
    except UsageError:
        return  # the database itself failed; its error says so
    click.echo(
        f"Run {run.id} is saved with {done} of {run.n_samples} samples scored; re-run the "
        "same command to continue it.",
        err=True,
    )


def stored_run_scores(store: RunStore, run: StoredRun, label: str) -> RunScores:
    """A stored run as one side of a comparison (evidence read only for samples shown)."""
    columns = store.score_columns(run)
    header = run_header(run.info, store.usage(run.id), {}, {}, [])
    return RunScores(label, header["run"], columns, lambda s, m: store.sample_details(run.id, s, m))


def is_run_ref(ref: str) -> bool:
    """A reference that names a run in the database rather than a results.json file."""
    return bool(LATEST.fullmatch(ref)) or not Path(ref).is_file()


def load_scores(ref: str, store: RunStore | None) -> RunScores:
    """One side of a comparison: `latest`, `latest~N`, a run id, or a results.json path."""
    if not is_run_ref(ref):
        return results_file_scores(Path(ref))
    if store is None:
        raise UsageError(f"'{ref}' is not a results.json file")  # a caller bug, never a user's
    run = store.resolve(ref)
    if not run.complete:
        raise UsageError(
            f"run {run.id} is incomplete ({run.n_done} of {run.n_samples} samples); finish it "
            "first (re-run its command) to compare it"
        )
    return stored_run_scores(store, run, ref)


def results_dict(store: RunStore, run: StoredRun) -> dict[str, Any]:
    """A stored run's whole results.json as one dict (all samples in memory: for reports;
    results.json itself is written streaming, see write_results)."""
    return {**header_of(store, run), "samples": list(store.sample_dicts(run))}


def header_of(store: RunStore, run: StoredRun) -> dict[str, Any]:
    """results.json without its samples, for a stored run."""
    columns = store.score_columns(run)
    return run_header(
        run.info,
        store.usage(run.id),
        columns.summaries(),
        columns.summaries_by_category(),
        run.gates or [],
    )
