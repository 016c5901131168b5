"""Continuing an interrupted run instead of starting over: the data file checked in full
first, and the run to record into chosen (the one `--resume RUN` names, an interrupted run
of the same evaluation, or a new one)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from localeval.backends.files import sha256_file
from localeval.data.samples import InvalidRowCounter, OnInvalid, OnWarning, read_samples
from localeval.data.shards import Shard
from localeval.errors import UsageError
from localeval.results.model import RunInfo
from localeval.runs.history import RunStore
from localeval.runs.records import StoredRun, fingerprint

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
    path: Path,
    on_invalid: OnInvalid | None = None,
    on_warning: OnWarning | None = None,
    shard: Shard | None = None,
) -> DatasetScan:
    """Validate every row in one streaming pass, before any model loads. Without
    `on_invalid` the first invalid row raises; with it, invalid rows go there. With a
    `shard`, every row is checked and the shard's samples counted."""
    counter = InvalidRowCounter(on_invalid)
    count = held = 0
    for sample in read_samples(path, counter.handler(), on_warning):
        count += 1
        held += shard is None or shard.holds(sample.sample_id)
    if not count:
        raise counter.no_samples(path)
    if not held:
        raise UsageError(
            f"shard {shard} of {path} holds none of its {count} samples; use fewer shards"
        )
    return DatasetScan(path, held, sha256_file(path))


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
) -> tuple[StoredRun, bool]:
    """The run to record into: the one asked for, an interrupted run of the same evaluation,
    or a new one; and whether it is an interrupted one, continued."""
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
        return store.start(info, n_samples, thresholds), False
    store.set_thresholds(same.id, thresholds)
    return same, True
