"""`evaluate NEW --baseline RUN --until-decided`: the run's part of a comparison that stops
when it is decided (the statistics are localeval.results.decision's).

The samples BASE holds are scored in a seeded random order, each one fed to the comparison
as it is stored; once every gated metric is decided, scoring stops and the run is kept,
stopped by design: a later `evaluate` of the same data without the option continues it.
A run continued with the option feeds the samples it stored first, in the same order, so
a comparison stopped part-way (Ctrl-C, --max-calls) goes on where it was.

A gated metric whose inputs are the same in every pair (the fields it reads, as BASE
stored them: in a prompt-tuning loop only the answers change, so the context metrics'
are) and that both runs scored alike (the same judge, settings, prompt set and metric
settings: localeval.results.comparability) cannot have changed: it is "no change"
without a test, and the comparison waits only for the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.data.samples import Sample, read_samples
from localeval.data.shards import Shard
from localeval.errors import UsageError, param
from localeval.history.records import StoredRun, ignore_invalid
from localeval.history.store import RunStore
from localeval.judge import Usage
from localeval.metrics import Metric
from localeval.metrics.base import fields_read
from localeval.results.comparability import scored_alike
from localeval.results.contract import run_object
from localeval.results.decision import (
    DEFAULT_MARGIN,
    SAME_INPUTS,
    SequentialComparison,
    scoring_order,
)
from localeval.results.model import RunInfo
from localeval.results.view import RunView


class Decided(Exception):
    """Every gated metric is decided: scoring stops, and the run is kept."""


@dataclass
class Deciding:
    """The comparison under way, and how many of the data's samples it can pair.
    `same_inputs`: the gated metrics whose inputs are the same in every pair, left untested
    once the run is known to score them as BASE did (`settle`)."""

    comparison: SequentialComparison
    n_paired: int
    n_samples: int
    baseline_run: Mapping[str, Any] = field(default_factory=dict)
    same_inputs: list[str] = field(default_factory=list)

    def settle(self, info: RunInfo) -> None:
        """The metrics left untested, now that the run's judge, embedder, prompt set and
        metric settings are known (before a sample is scored or a model loaded)."""
        new = run_object(info, Usage())
        alike = [m for m in self.same_inputs if scored_alike(dict(self.baseline_run), new, m)]
        self.comparison.leave_untested(dict.fromkeys(alike, SAME_INPUTS))


def check_deciding_options(until_decided: bool, margin: float | None, baseline: bool) -> None:
    """The options of `--until-decided` that contradict each other, refused before anything
    is opened or created."""
    if not until_decided and margin is not None:
        raise UsageError(f"{param('margin')} applies only with {param('until_decided')}")
    if until_decided and not baseline:
        raise UsageError(
            f"{param('until_decided')} compares with a run: give {param('baseline')} RUN"
        )


def start_deciding(
    until_decided: bool,
    margin: float | None,
    baseline: RunView | None,
    gated: Sequence[Metric],
    rows: Sequence[Sample],
    store: RunStore,
) -> Deciding | None:
    """The comparison `--until-decided` asks for, checked before any model loads (None
    without the option). `gated`: the run's gated metrics; `rows`: the samples it scores."""
    check_deciding_options(until_decided, margin, baseline is not None)
    if not until_decided or baseline is None:
        return None
    metrics = [m for m in gated if m.name in baseline.columns.scores]
    if not metrics:
        raise UsageError(
            f"{param('until_decided')}: the {param('baseline')} run {baseline.label} holds none "
            "of this run's "
            f"gated metrics ({', '.join(m.name for m in gated) or 'none'})"
        )
    comparison = SequentialComparison(
        baseline, [m.name for m in metrics], DEFAULT_MARGIN if margin is None else margin
    )
    paired = comparison.pairs_with([row.sample_id for row in rows])
    if not paired:
        raise UsageError(
            f"the {param('baseline')} run {baseline.label} holds none of these {len(rows)} "
            f"samples (paired by sample_id): {param('until_decided')} compares two versions of "
            "the same samples"
        )
    same = same_inputs(metrics, [r for r in rows if r.sample_id in paired], baseline, store)
    return Deciding(comparison, len(paired), len(rows), baseline.run, same)


def same_inputs(
    metrics: Sequence[Metric], rows: Sequence[Sample], baseline: RunView, store: RunStore
) -> list[str]:
    """The metrics whose fields read (fields_read) are, in each of `rows`, those BASE
    stored for the same sample; a field BASE did not store is not the same."""
    stored = baseline_inputs(baseline, store)
    alike = {m.name for m in metrics}
    for row in rows:
        inputs = stored.get(row.sample_id)
        before = None if inputs is None else stored_sample(row.sample_id, inputs)
        if inputs is None or before is None:
            return []  # a pair whose BASE inputs are unknown: every metric stays tested
        for metric in [m for m in metrics if m.name in alike]:
            read = {*fields_read(metric, row), *fields_read(metric, before)}
            if not all(f in inputs and inputs[f] == getattr(row, f, None) for f in read):
                alike.discard(metric.name)
    return [m.name for m in metrics if m.name in alike]


def baseline_inputs(baseline: RunView, store: RunStore) -> Mapping[str, Mapping[str, Any]]:
    """BASE's samples' inputs by id: a results file holds them in its samples, a stored
    run in the history."""
    if baseline.samples:
        return {str(s.get("sample_id")): s for s in baseline.samples}
    return store.sample_inputs(baseline.run_id) if baseline.run_id is not None else {}


def stored_sample(sample_id: str, inputs: Mapping[str, Any]) -> Sample | None:
    """A stored sample's inputs as a Sample (None when they are not all of their types)."""
    texts = [inputs.get(f) for f in ("question", "answer", "reference_answer")]
    contexts = inputs.get("contexts")
    if not all(t is None or isinstance(t, str) for t in texts) or not (
        contexts is None
        or (isinstance(contexts, list) and all(isinstance(c, str) for c in contexts))
    ):
        return None
    question, answer, reference = texts
    return Sample(sample_id, question or "", contexts, answer, reference)


def data_rows(path: Path, label: str, shard: Shard | None) -> list[Sample]:
    """The valid rows a run scores (those of `shard`, when one is given)."""
    rows = read_samples(path, ignore_invalid, name=label)
    return [s for s in rows if shard is None or shard.holds(s.sample_id)]


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
