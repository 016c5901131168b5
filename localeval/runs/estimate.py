"""`evaluate --estimate`: what an evaluation will cost, counted by running its metrics on
each sample against the counting tools (localeval.tools.estimate), without evaluating
anything; and whether the progress line can start from an estimate (`speed_kept`)."""

from __future__ import annotations

from functools import partial

from localeval.backends import judge_backend
from localeval.data.samples import read_samples
from localeval.engine import score_metric
from localeval.runs.evaluation import Evaluation
from localeval.tools.estimate import Counting, Estimate
from localeval.tools.speed import judge_speed

__all__ = ["Estimate", "estimate_evaluation", "speed_kept"]


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
