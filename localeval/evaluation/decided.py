"""`evaluate NEW --baseline RUN --until-decided`: the run's part of a comparison that stops
when it is decided (the statistics are localeval.results.decision's).

The samples BASE holds are scored in a seeded random order, each one fed to the comparison
as it is stored; once every gated metric is decided, scoring stops and the run is kept,
stopped by design: a later `evaluate` of the same data without the option continues it.
A run continued with the option feeds the samples it stored first, in the same order, so
a comparison stopped part-way (Ctrl-C, --max-calls) goes on where it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from localeval.data.samples import Sample, read_samples
from localeval.data.shards import Shard
from localeval.errors import UsageError
from localeval.history.records import StoredRun, ignore_invalid
from localeval.history.store import RunStore
from localeval.results.decision import DEFAULT_MARGIN, SequentialComparison, scoring_order
from localeval.results.view import RunView


class Decided(Exception):
    """Every gated metric is decided: scoring stops, and the run is kept."""


@dataclass
class Deciding:
    """The comparison under way, and how many of the data's samples it can pair."""

    comparison: SequentialComparison
    n_paired: int
    n_samples: int


def start_deciding(
    until_decided: bool,
    margin: float | None,
    baseline: RunView | None,
    gated: Sequence[str],
    sample_ids: Sequence[str],
) -> Deciding | None:
    """The comparison `--until-decided` asks for, checked before any model loads (None
    without the option). `gated`: the run's gated metrics; `sample_ids`: those it scores."""
    if not until_decided:
        if margin is not None:
            raise UsageError("--margin applies only with --until-decided")
        return None
    if baseline is None:
        raise UsageError("--until-decided compares with a run: give --baseline RUN")
    metrics = [m for m in gated if m in baseline.columns.scores]
    if not metrics:
        raise UsageError(
            f"--until-decided: the --baseline run {baseline.label} holds none of this run's "
            f"gated metrics ({', '.join(gated) or 'none'})"
        )
    comparison = SequentialComparison(
        baseline, metrics, DEFAULT_MARGIN if margin is None else margin
    )
    paired = comparison.pairs_with(sample_ids)
    if not paired:
        raise UsageError(
            f"the --baseline run {baseline.label} holds none of these {len(sample_ids)} samples "
            "(paired by sample_id): --until-decided compares two versions of the same samples"
        )
    return Deciding(comparison, len(paired), len(sample_ids))


def data_sample_ids(path: Path, label: str, shard: Shard | None) -> list[str]:
    """The ids of the valid rows a run scores (those of `shard`, when one is given)."""
    rows = read_samples(path, ignore_invalid, name=label)
    return [s.sample_id for s in rows if shard is None or shard.holds(s.sample_id)]


def deciding_order(
    store: RunStore,
    run: StoredRun,
    rows: Sequence[Sample],
    deciding: Deciding,
    shard: Shard | None,
) -> list[int]:
    """The positions of the rows to score, in the seeded order: those BASE holds. The
    samples the run stored before (a continued run) are fed to the comparison first."""
    held = [s.sample_id for s in rows if shard is None or shard.holds(s.sample_id)]
    paired = deciding.comparison.pairs_with(held)
    order = [p for p in scoring_order(len(rows)) if rows[p].sample_id in paired]
    _replay_stored(store, run, rows, order, deciding)
    return order


def _replay_stored(
    store: RunStore,
    run: StoredRun,
    rows: Sequence[Sample],
    order: Sequence[int],
    deciding: Deciding,
) -> None:
    stored = store.get(run.id)
    if not stored.n_done:
        return
    columns = store.score_columns(stored)
    where = {sample_id: k for k, sample_id in enumerate(columns.sample_ids)}
    for position in order:
        k = where.get(rows[position].sample_id)
        if k is not None:
            scores = {m: float(column[k]) for m, column in columns.scores.items()}
            deciding.comparison.observe(rows[position].sample_id, scores)
