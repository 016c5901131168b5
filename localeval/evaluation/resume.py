"""Continuing an interrupted run instead of starting over: the data file checked in full
first, and the run to record into chosen (the one `--resume RUN` names, an interrupted run
of the same evaluation, or a new one)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from localeval.backends.model_files import sha256_file
from localeval.data.samples import InvalidRowCounter, OnInvalid, OnWarning, read_samples
from localeval.data.shards import Shard
from localeval.errors import RunInUseError, UsageError, param
from localeval.history.records import StoredRun, fingerprint, not_resumable
from localeval.history.store import RunStore
from localeval.results.model import RunInfo
from localeval.text import detect_language

#: `--resume` without a run id: continue this evaluation's interrupted run, which must exist
RESUME_MATCHING = "matching"


@dataclass(frozen=True)
class DatasetScan:
    """A data file checked in full: its rows are valid (or skipped), how many valid rows there
    are, its content hash."""

    path: Path
    n_samples: int
    sha256: str
    #: samples by the language of their question ("en", "zh")
    languages: Mapping[str, int] = field(default_factory=dict)


def scan_dataset(
    path: Path,
    on_invalid: OnInvalid | None = None,
    on_warning: OnWarning | None = None,
    name: str | None = None,
    shard: Shard | None = None,
) -> DatasetScan:
    """Validate every row in one streaming pass, before any model loads. Without
    `on_invalid` the first invalid row raises; with it, invalid rows go there. Messages name
    the file `name` (see read_samples). With a `shard`, every row is checked and the shard's
    samples counted."""
    counter = InvalidRowCounter(on_invalid)
    languages: Counter[str] = Counter()
    count = 0
    for sample in read_samples(path, counter.handler(), on_warning, name):
        count += 1
        if shard is None or shard.holds(sample.sample_id):
            languages[detect_language(sample.question)] += 1
    if not count:
        raise counter.no_samples(name or path)
    held = sum(languages.values())
    if not held:
        raise UsageError(
            f"shard {shard} of {name or path} holds none of its {count} samples; use fewer shards"
        )
    return DatasetScan(path, held, sha256_file(path), dict(languages))


def check_resume_target(
    store: RunStore, ref: str, dataset: DatasetScan, metrics: list[str]
) -> StoredRun:
    """The run `--resume RUN` names, checked as far as possible before the models load."""
    run = store.resolve(ref)
    if run.complete:
        raise UsageError(f"run {run.id} is already complete; there is nothing to resume")
    if run.invalid is not None:
        raise not_resumable(run)
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


@dataclass
class ChosenRun:
    """The run to record into, whether it is an interrupted one continued, and the runs of
    the same evaluation passed over because a live process is writing them."""

    run: StoredRun
    resumed: bool
    in_use: list[RunInUseError]


def choose_run(
    store: RunStore,
    info: RunInfo,
    n_samples: int,
    thresholds: Mapping[str, float],
    resume: str | None,
    new_run: bool,
    target: StoredRun | None,
) -> ChosenRun:
    """The run to record into: the one asked for, an interrupted run of the same evaluation
    that no live process is writing, or a new one. A run another process is writing is never
    joined: asked for by `--resume`, that is an error; found by itself, a new run starts."""
    if target is not None:
        if target.fingerprint != fingerprint(info):
            raise UsageError(
                f"run {target.id} is not the same evaluation as this command (its judge, "
                f"embedder, prompt version or metric settings differ); use {param('resume=False')} "
                "to start a new run"
            )
        try:
            claimed = store.claim(target.id)
        except RunInUseError as busy:
            raise UsageError(
                f"{busy}; wait for it to finish, or start a new run with {param('resume=False')}"
            ) from None
        if claimed is None:
            raise UsageError(f"run {target.id} is already complete; there is nothing to resume")
        return ChosenRun(_resumed(store, claimed, thresholds), True, [])
    in_use: list[RunInUseError] = []
    for candidate in [] if new_run else store.find_resumable(fingerprint(info)):
        try:
            claimed = store.claim(candidate.id)
        except RunInUseError as busy:
            in_use.append(busy)
            continue
        if claimed is not None:
            return ChosenRun(_resumed(store, claimed, thresholds), True, in_use)
    if resume == RESUME_MATCHING:
        busy = f" ({'; '.join(str(e) for e in in_use)})" if in_use else ""
        raise UsageError(
            f"no interrupted run of this evaluation (same data, models, prompts and metrics) "
            f"to resume{busy}; run without {param('resume')} to start one"
        )
    return ChosenRun(store.start(info, n_samples, thresholds), False, in_use)


def _resumed(store: RunStore, run: StoredRun, thresholds: Mapping[str, float]) -> StoredRun:
    """A resumed run takes the thresholds of the command that finishes it."""
    store.set_thresholds(run.id, thresholds)
    return store.get(run.id)
