"""`evaluate --estimate`: what an evaluation will cost, counted by running its metrics on
each sample against the counting tools (localeval.estimate.counting), without evaluating
anything; with --ray, how the cluster's actors divide it (`divide`); and whether the
progress line can start from an estimate (`speed_kept`)."""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass
from functools import partial

from localeval.backends import judge_backend
from localeval.config import ModelsConfig
from localeval.data.samples import read_samples
from localeval.engine import score_metric
from localeval.estimate.counting import Counting, Estimate
from localeval.estimate.speed import judge_speed
from localeval.evaluation.ray.driver import actor_bytes
from localeval.evaluation.ray.join import Connection
from localeval.evaluation.ray.remote import Chosen
from localeval.evaluation.requests import ClusterPlan
from localeval.evaluation.run import Evaluation

__all__ = ["Division", "Estimate", "cluster_division", "estimate_evaluation", "speed_kept"]


def speed_kept(evaluation: Evaluation) -> bool:
    """Whether the run's judge can be estimated and its speed here is kept already (so an
    estimate needs no measuring)."""
    if not any(metric.uses_judge for metric in evaluation.metrics):
        return False
    config = evaluation.models.judge(evaluation.request.judge)
    backend = judge_backend(config.backend)
    if not hasattr(backend, "counter"):
        return False
    identity = backend.identify(config.name, config.settings)
    store = evaluation.store.connection
    return judge_speed(store, config, identity, measure=False) is not None


def estimate_evaluation(evaluation: Evaluation, measure: bool = True) -> Estimate:
    """What `evaluation.run()` will cost, counted without evaluating anything. `measure`:
    time a model whose speed on this machine is not kept yet (else its time is left out)."""
    request, metrics = evaluation.request, evaluation.metrics
    shard = evaluation.shard
    with Counting(
        evaluation.models,
        metrics,
        request.judge,
        request.embedder,
        request.db,
        request.use_cache,
        [metric.name for metric in metrics],
    ) as counting:
        on_invalid = _ignore if request.skip_invalid else None
        for sample in read_samples(request.data, on_invalid, name=evaluation.label):
            if shard is not None and not shard.holds(sample.sample_id):
                continue
            for metric in metrics:
                scored = partial(score_metric, sample, metric, counting.tools)
                counting.count(sample.sample_id, metric.name, scored)
        return counting.estimate(measure)


def _ignore(_error: Exception) -> None:
    """Invalid rows: the checks before the estimate reported them."""


@dataclass(frozen=True)
class Division:
    """How a cluster's actors divide an estimated run: samples the cache answers here, and
    each actor's samples and seconds (samples go to whichever actor is free first)."""

    plan: ClusterPlan
    here: int
    per_actor: list[tuple[int, float]]
    #: the whole run's time on the cluster: the busiest actor's, its loading included
    seconds: float
    #: how much slower an actor's judge is than this machine's, in threads
    slower: float
    #: whether the estimate knew every speed (else the samples' seconds are not known)
    timed: bool = True

    def as_dict(self) -> dict[str, object]:
        """The division as --estimate --output writes it (under "ray")."""
        plan = self.plan
        return {
            "address": plan.address or None,
            "nodes": plan.nodes,
            "cpus": plan.cpus,
            "actors": plan.actors,
            "threads_per_actor": plan.threads,
            "answered_here": self.here,
            "samples_per_actor": [n for n, _ in self.per_actor],
            "seconds_per_actor": [round(s, 3) for _, s in self.per_actor],
            "seconds": round(self.seconds, 3),
            "actor_slower_by": round(self.slower, 3),
        }


def divide(estimate: Estimate, plan: ClusterPlan, threads_here: int | None) -> Division:
    """The estimate's samples dealt to the plan's actors as the run deals them, each
    sample's time scaled from this machine's judge threads to an actor's."""
    slower = threads_here / plan.threads if threads_here else 1.0
    loading = sum(estimate.loading.values())
    items = list(estimate.per_item.values())
    first = next((i for i, seconds in enumerate(items) if seconds > 0), None)
    if first is not None:
        items[first] = max(0.0, items[first] - loading)  # each actor loads, below
    actors = [(loading, index) for index in range(plan.actors)]
    counts = [0] * plan.actors
    here = 0
    for seconds in items:
        if seconds <= 0:
            here += 1
            continue
        free_at, index = heapq.heappop(actors)
        counts[index] += 1
        heapq.heappush(actors, (free_at + seconds * slower, index))
    ends = {index: at for at, index in actors}
    per_actor = [(counts[i], ends[i] if counts[i] else 0.0) for i in range(plan.actors)]
    longest = max((s for _, s in per_actor), default=0.0)
    return Division(plan, here, per_actor, longest, slower, estimate.timed)


def threads_here(models: ModelsConfig, judge: str | None) -> int | None:
    """The threads this machine's judge runs with (what its measured speed is for), or
    None for a judge without threads (a server's)."""
    threads = getattr(models.judge(judge).settings, "threads", None)
    if threads is None:
        return None
    return int(threads) or os.cpu_count() or 1


def cluster_division(evaluation: Evaluation, estimate: Estimate) -> Division:
    """How the Ray cluster of `evaluate --ray` would divide the estimated run (its nodes
    asked now; nothing is started on them)."""
    request = evaluation.request
    settings = request.ray
    if settings is None:
        raise ValueError("not a run on a Ray cluster")  # a caller's bug
    chosen = Chosen.of(evaluation.models, evaluation.metrics, request.judge, request.embedder)
    connection = Connection(settings)
    try:
        plan = connection.plan(settings, actor_bytes(evaluation.models, chosen))
    finally:
        connection.close()
    judge = request.judge if chosen.judge is not None else None
    here = threads_here(evaluation.models, judge) if chosen.judge is not None else None
    return divide(estimate, plan, here)
