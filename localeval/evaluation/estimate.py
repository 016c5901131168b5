"""`evaluate --estimate`, a thin caller of localeval.estimate: what an evaluation will cost,
counted by running its metrics on each sample against the counting tools
(localeval.estimate.counting), without evaluating anything; with --ray, how the cluster's
actors divide it (localeval.estimate.division); and whether the progress line can start
from an estimate (`speed_kept`)."""

from __future__ import annotations

from functools import partial

from localeval.data.samples import read_samples
from localeval.engine import score_metric
from localeval.estimate.counting import Counting, Estimate
from localeval.estimate.division import Division, divide, threads_here
from localeval.estimate.speed import judge_speed_kept
from localeval.evaluation.ray.driver import actor_bytes
from localeval.evaluation.ray.join import Connection
from localeval.evaluation.ray.remote import Chosen
from localeval.evaluation.scoring import ScoringRun

__all__ = ["Division", "Estimate", "cluster_division", "estimate_evaluation", "speed_kept"]


def speed_kept(evaluation: ScoringRun) -> bool:
    """Whether the run's judge can be estimated and its speed here is kept already (so an
    estimate needs no measuring)."""
    if not any(metric.uses_judge for metric in evaluation.metrics):
        return False
    config = evaluation.models.judge(evaluation.request.judge)
    return judge_speed_kept(evaluation.store.connection, config)


def estimate_evaluation(evaluation: ScoringRun, measure: bool = True) -> Estimate:
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


def cluster_division(evaluation: ScoringRun, estimate: Estimate) -> Division:
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
