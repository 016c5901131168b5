"""What `localeval evaluate` is asked (`EvaluationRequest`, with its `Budget`), what it tells
its caller along the way (`EvaluationEvents`) and what it returns (`EvaluationOutcome`):
the terms of localeval.evaluation.scoring, which does the work.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from localeval.data.samples import DatasetWarning
from localeval.database import Location
from localeval.errors import DatasetError, RunInUseError, UsageError, param
from localeval.history.records import StoredRun
from localeval.judge import Usage
from localeval.results.diagnosis import RunDiagnosis
from localeval.results.diff import DEFAULT_MAX_DROP
from localeval.results.gates import AUTO, DEFAULT_MIN_DEFINED, GateResult
from localeval.results.model import SampleResult
from localeval.results.view import RunView
from localeval.stats import MetricSummary


@dataclass(frozen=True)
class Budget:
    """How much a run may spend before it stops, resumable (None: no limit). The sample
    being scored when the budget runs out is finished and kept."""

    minutes: float | None = None
    calls: int | None = None

    def check(self) -> None:
        for value, option in ((self.minutes, "max_minutes"), (self.calls, "max_calls")):
            # not NaN or infinity either: no spending ever reaches them (no limit, silently)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise UsageError(f"{param(option)} must be more than 0, got {value:g}")

    def spent(self, seconds: float, calls: int) -> str | None:
        """Which limit this much spending reaches ("max_calls 500", its parameter marked), or
        None."""
        if self.minutes is not None and seconds >= 60.0 * self.minutes:
            return f"{param('max_minutes')} {self.minutes:g}"
        if self.calls is not None and calls >= self.calls:
            return f"{param('max_calls')} {self.calls}"
        return None


@dataclass(frozen=True)
class RaySettings:
    """Where and how samples are scored on a Ray cluster (localeval.evaluation.ray.driver).

    `address`: a cluster's head (host:port), or None for the cluster
    RAY_ADDRESS names, else a local one started for the run. `actors` and `threads` (each
    actor's CPUs, its models' threads): None for what fills the cluster.
    """

    address: str | None = None
    actors: int | None = None
    threads: int | None = None

    def check(self) -> None:
        for value, option in ((self.actors, "ray_actors"), (self.threads, "ray_threads")):
            if value is not None and value < 1:
                raise UsageError(f"{param(option)} must be at least 1, got {value}")


@dataclass(frozen=True)
class ClusterPlan:
    """The actors a Ray cluster scores with: how many, each with how many threads, on how
    many nodes of how many CPUs."""

    #: the cluster's address ("": one started here for the run)
    address: str
    actors: int
    threads: int
    nodes: int
    cpus: int

    def __str__(self) -> str:
        cluster = f"Ray cluster at {self.address}" if self.address else "Ray cluster started here"
        return (
            f"{self.actors} actor{'s' * (self.actors != 1)} × {self.threads} "
            f"thread{'s' * (self.threads != 1)}, {cluster} "
            f"({self.nodes} node{'s' * (self.nodes != 1)}, {self.cpus} CPUs)"
        )


@dataclass(frozen=True)
class EvaluationRequest:
    """What `localeval evaluate` was asked to do."""

    data: Path
    metrics: Sequence[str] = ()
    output: Path | None = None
    #: overrides of the gates: METRIC=VALUE texts (--threshold), or metric -> value given
    #: in code (the Python API)
    thresholds: Sequence[str] | Mapping[str, float] = ()
    judge: str | None = None
    embedder: str | None = None
    models: str | None = None
    skip_invalid: bool = False
    db: Location | None = None
    #: a run id, RESUME_MATCHING, or None to continue an interrupted run of the same
    #: evaluation if there is one
    resume: str | None = None
    new_run: bool = False
    baseline: str | None = None
    max_drop: float = DEFAULT_MAX_DROP
    use_cache: bool = True
    #: where the judge/embedding cache is when it is not in `db` (the Python API's runs kept
    #: in no history); None: in `db`
    cache_db: Location | None = None
    #: the size limit of the llama.cpp judge's context states on disk, in GB (None: the
    #: judge's models.toml entry's; 0: keep none)
    state_cache_gb: float | None = None
    #: the metrics' own options by name (e.g. the rubric's criteria_file)
    metric_options: Mapping[str, Any] = field(default_factory=dict)
    #: the share of samples that must have a score for a metric's gate to pass
    min_defined: float = DEFAULT_MIN_DEFINED
    #: which mean a gate reads: the judge's, the one corrected by labels, or auto (GATE_ON)
    gate_on: str = AUTO
    #: how messages and the run history name the data (default: its path, made printable;
    #: "<stdin>" for data read from standard input)
    data_label: str | None = None
    #: "K/N": score only shard K of N (localeval.data.shards), for `runs merge` to join
    shard: str | None = None
    #: stop, resumable, once the scoring has taken this many minutes or judge calls
    budget: Budget = field(default_factory=Budget)
    #: score on a Ray cluster (None: in this process)
    ray: RaySettings | None = None
    #: score in a seeded random order and stop once the comparison with `baseline` is
    #: decided (localeval.evaluation.decided), with this margin for "no change" (None: the default)
    until_decided: bool = False
    margin: float | None = None


class EvaluationEvents:
    """What an evaluation tells its caller along the way; each method does nothing here."""

    def skipped(self, error: DatasetError) -> None:
        """An invalid row left out (--skip-invalid)."""

    def warned(self, warning: DatasetWarning) -> None:
        """Something in a usable row the user may not have meant."""

    def loaded(self, n_samples: int, n_skipped: int, metrics: Sequence[str], data: str) -> None:
        """The data checked in full; the models are about to load. `data`: how messages
        name it (its path made printable, "<stdin>", "<DataFrame>", ...)."""

    def noted(self, message: str) -> None:
        """Something about the options the user should know (one that has no effect, an
        output file that will be replaced), its parameters named already (rendered)."""

    def in_use(self, busy: RunInUseError) -> None:
        """An interrupted run of the same evaluation is passed over: a live process is
        writing it (this one starts its own)."""

    def resuming(self, run: StoredRun) -> None:
        """An interrupted run of the same evaluation is continued."""

    def estimated(self, seconds: Mapping[str, float]) -> None:
        """Each sample's estimated seconds, told before scoring starts when the judge's speed
        on this machine is known (only with progress on): where a time left can start."""

    def scoring(self, run: StoredRun) -> None:
        """Scoring starts: `run.n_done` of `run.n_samples` samples are stored already."""

    def scored(self, result: SampleResult) -> None:
        """One more sample is scored and stored."""

    def stopped(self, run: StoredRun, n_done: int) -> None:
        """Scoring stopped part-way (an error or Ctrl-C); `n_done` samples are kept."""

    def invalidated(self, run: StoredRun, reason: str) -> None:
        """Scoring stopped part-way, and the data changed meanwhile (`reason`): the run is
        marked never to be continued."""

    def scoring_ended(self) -> None:
        """Scoring ended, finished or not."""

    def evaluated(self, evaluation: Any) -> None:
        """The run is finished (or stopped once decided) and its gates checked: the
        `localeval.Evaluation` the call returns, told before its results.json is written
        (`output`), so that what is shown of it comes first."""

    def cluster_ready(self, plan: ClusterPlan) -> None:
        """Connected to the Ray cluster, which will score with these actors (started at the
        first sample the cache cannot answer)."""

    def cluster_done(self, sent: int, answered: int, plan: ClusterPlan) -> None:
        """Scoring on the cluster ended: `sent` samples were scored by its actors, `answered`
        from the cache here."""


@dataclass
class EvaluationOutcome:
    """A finished run: the run, and its view with the summaries, gates, cost and diagnosis
    that `evaluate` shows."""

    run: StoredRun
    view: RunView
    #: metrics whose gate is the judge's own threshold (models.toml), and that judge
    from_judge: list[str]
    judge: str | None
    #: --until-decided: results.json's `run.until_decided` (the run is complete only when
    #: the data's end came first)
    until_decided: dict[str, Any] | None = None
    #: what this process's scoring restored from kept context states (the judge's state
    #: store): samples that read contexts from there, and the prompt tokens not read again
    from_states: IterationCost = field(default_factory=lambda: IterationCost())

    @property
    def summaries(self) -> Mapping[str, MetricSummary]:
        return self.view.summaries

    @property
    def by_category(self) -> Mapping[str, Mapping[str, MetricSummary]]:
        return self.view.by_category

    @property
    def gates(self) -> list[GateResult]:
        return list(self.view.gates)

    @property
    def usage(self) -> Usage:
        return self.view.usage or Usage()

    @property
    def diagnosis(self) -> RunDiagnosis | None:
        """Which part of the pipeline failed (answer_correctness --diagnose), or None."""
        return self.view.diagnosis

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)


@dataclass
class IterationCost:
    """What an `evaluate` process's scoring restored from kept context states: how many of
    the samples it scored read some of their contexts from there, and those tokens."""

    samples_from_states: int = 0
    restored_prompt_tokens: int = 0

    def add(self, result: SampleResult) -> None:
        self.samples_from_states += result.restored_tokens > 0
        self.restored_prompt_tokens += result.restored_tokens

    def after(self, earlier: Any, samples_scored: int, prompt_tokens: int) -> dict[str, int]:
        """results.json's `run.until_decided.cost`: the run's stored samples and the prompt
        tokens the judge read for them (every try's), with what this process restored added
        to what the `cost` of an earlier try's report says (a try stopped by Ctrl-C or a
        budget records none)."""
        total = {"samples_scored": samples_scored, "prompt_tokens": prompt_tokens}
        cost = earlier.get("cost") if isinstance(earlier, dict) else None
        for key, value in asdict(self).items():
            before = cost.get(key) if isinstance(cost, dict) else None
            total[key] = value + (before if isinstance(before, int) else 0)
        return total
