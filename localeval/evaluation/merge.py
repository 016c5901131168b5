"""`localeval runs merge`: the shards of one evaluation (`evaluate --shard K/N` on N
machines) joined into one run, as if one machine had scored every sample.

The shards must be all N of the same evaluation: the same data, judge, embedder, prompts,
metrics and gates. Their samples are put back in dataset order (each shard's samples say
their position), stored as one complete run of the history, and summarised by the code
that summarises any run; so the summary, its intervals (a fixed-seed bootstrap over the
same scores in the same order) and the gates are those of a single run over all samples;
its results.json is built as any stored run's is (localeval.results.contract.run_report).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from localeval.data.samples import Sample
from localeval.data.shards import Shard
from localeval.database import Location
from localeval.errors import UsageError, param
from localeval.evaluation.sources import results_dict, stored_report, stored_view
from localeval.history.output import history_output
from localeval.history.records import StoredRun
from localeval.history.store import RunStore
from localeval.judge import Usage
from localeval.metrics import MetricResult
from localeval.results.contract import read_results_file, write_results
from localeval.results.gates import evaluate_gates
from localeval.results.model import RunInfo, SampleResult, new_run_id, now
from localeval.results.output_files import OutputTarget
from localeval.results.refs import RunRef
from localeval.results.view import RunView, gate_results, read_usage

#: what every shard of one evaluation has in common (results.json's run object)
_SAME = ("dataset_sha256", "embedder", "prompt_version", "metrics", "metric_settings")


@dataclass
class MergeOutcome:
    """The merged run: stored, and its view with its summaries (sub-scores included),
    gates and cost."""

    run: StoredRun
    view: RunView
    #: differences between the shards worth a word (their servers reported differently)
    warnings: list[str]

    @property
    def passed(self) -> bool:
        return not self.view.failed_gates


def check_merge_output(refs: Sequence[str], db: Location, output: Path) -> OutputTarget:
    """What writing the merged run to `output` will do, checked before any work (UsageError
    when it would overwrite a shard, the database, or cannot be written)."""
    return history_output(output, db, refs, "a shard merged")


def load_shard(ref: RunRef, store: RunStore) -> dict[str, Any]:
    """One shard's results: a results.json file, or a complete run of the history."""
    if ref.path is not None:
        if not ref.path.exists():
            raise UsageError(f"'{ref.text}': no such results file")
        return read_results_file(ref.path)
    run = store.resolve(ref.text)
    if run.invalid is not None:  # re-running its command starts a new run: say so
        raise UsageError(
            f"run {run.id} can never be merged: {run.invalid}; evaluate that shard again"
        )
    if not run.complete:
        raise UsageError(f"run {run.id} is incomplete; finish it (re-run its command) to merge it")
    return results_dict(store, run)


def _check_shards(shards: Sequence[tuple[str, dict[str, Any]]]) -> tuple[int, list[str]]:
    """The number of shards, after checking that these are all of one evaluation's; and
    the differences that are only worth a warning."""
    found: dict[int, str] = {}
    counts = set()
    for label, data in shards:
        text = data["run"].get("shard")
        if not isinstance(text, str):
            raise UsageError(f"{label} is not a shard (made without evaluate {param('shard')} K/N)")
        shard = Shard.parse(text)
        if shard.index in found:
            raise UsageError(f"{label} and {found[shard.index]} are both shard {shard}")
        found[shard.index] = label
        counts.add(shard.count)
    if len(counts) > 1:
        raise UsageError(f"the runs split the data into different numbers of shards: {counts}")
    count = counts.pop()
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in found]
    if missing:
        raise UsageError(f"shard {', '.join(missing)} missing: merge all {count} shards")
    first_label, first = shards[0]
    warnings = []
    for label, data in shards[1:]:
        for key in _SAME:
            if data["run"].get(key) != first["run"].get(key):
                raise UsageError(f"{label} and {first_label} differ in {key}: not one evaluation")
        judges = [d["run"].get("judge") or {} for d in (first, data)]
        if [_without_server(j) for j in judges] != [_without_server(judges[0])] * 2:
            raise UsageError(f"{label} and {first_label} used different judges")
        if judges[0].get("server") != judges[1].get("server"):
            warnings.append(f"the judge's server reported differently in {label}")
        if _thresholds(data) != _thresholds(first):
            raise UsageError(f"{label} and {first_label} gate with different thresholds")
    return count, warnings


def _without_server(judge: dict[str, Any]) -> dict[str, Any]:
    """A judge's record but for what its server reported (shards may use two servers)."""
    return {k: v for k, v in judge.items() if k != "server"}


def _thresholds(data: dict[str, Any]) -> dict[str, float]:
    return {gate.metric: gate.threshold for gate in gate_results(data)}


def _result(sample: dict[str, Any], metrics: Sequence[str], usage: Usage) -> SampleResult:
    """A results.json sample as the engine's result, to store as any scored sample."""
    results = {}
    for metric in metrics:
        details = dict((sample.get("details") or {}).get(metric) or {})
        reason = details.pop("undefined_reason", None)
        results[metric] = MetricResult(sample["scores"].get(metric), details, reason)
    inputs = Sample(
        sample_id=str(sample["sample_id"]),
        question=sample.get("question") or "",
        contexts=sample.get("contexts"),
        answer=sample.get("answer"),
        reference_answer=sample.get("reference_answer"),
        category=sample.get("category"),
    )
    return SampleResult(inputs, results, usage)


def _ordered(
    shards: Sequence[tuple[str, dict[str, Any]]],
) -> list[tuple[int, dict[str, Any], Usage]]:
    """Every sample with its dataset position, in dataset order; a shard's whole cost is
    put on its first sample (results.json keeps no cost per sample)."""
    rows: list[tuple[int, dict[str, Any], Usage]] = []
    seen: dict[str, str] = {}
    for label, data in shards:
        usage = read_usage(data["run"].get("usage")) or Usage()
        for number, sample in enumerate(data["samples"]):
            if not isinstance(sample.get("position"), int):
                raise UsageError(f"{label}: sample {number + 1} has no position; not a shard")
            sample_id = str(sample["sample_id"])
            if sample_id in seen:
                raise UsageError(f"sample '{sample_id}' is in both {seen[sample_id]} and {label}")
            seen[sample_id] = label
            rows.append((sample["position"], sample, usage if number == 0 else Usage()))
    return sorted(rows, key=lambda row: row[0])


def merge_shards(refs: Sequence[str], store: RunStore, output: Path | None = None) -> MergeOutcome:
    """Join the shards named into one complete run of the history (and `output`)."""
    target = check_merge_output(refs, store.path, output) if output is not None else None
    shards = [(ref, load_shard(RunRef(ref), store)) for ref in refs]
    if not shards:
        raise UsageError("name the shards to merge: run ids or results.json files")
    _, warnings = _check_shards(shards)
    first = shards[0][1]["run"]
    metrics = list(first["metrics"])
    skipped = [row for _, data in shards for row in data["run"].get("skipped_rows") or []]
    info = RunInfo(
        new_run_id(),
        now(),
        metrics,
        first.get("judge"),
        first.get("embedder"),
        prompt_version=first["prompt_version"],
        dataset=first.get("dataset"),
        dataset_sha256=first.get("dataset_sha256"),
        metric_settings=first.get("metric_settings") or {},
        skipped_rows=list({repr(row): row for row in skipped}.values()),
        # the versions that made the shards' numbers, as each shard recorded them
        software=first.get("software") or {},
    )
    rows = _ordered(shards)
    run = store.start(info, len(rows), _thresholds(shards[0][1]))
    for position, sample, usage in rows:
        store.record_sample(run.id, position, _result(sample, metrics, usage))
    # sub-scores ("rubric.accuracy") from the details stored, as for any run
    view = stored_view(store, run)
    # labels of earlier runs of these samples carry over: a gate reads them as evaluate's does
    gates = evaluate_gates(view.summaries, _thresholds(shards[0][1]), corrected=view.corrected)
    run = store.complete(run.id, gates)
    if target is not None:
        write_results(target, *stored_report(store, run))
    return MergeOutcome(run, replace(view, gates=tuple(gates)), warnings)
