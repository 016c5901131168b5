"""The metrics localeval computes, by name."""

from __future__ import annotations

from collections.abc import Callable

from localeval.metrics.answer_relevancy import AnswerRelevancy
from localeval.metrics.base import Metric, MetricResult, Tools
from localeval.metrics.context_precision import ContextPrecision
from localeval.metrics.context_recall import ContextRecall
from localeval.metrics.faithfulness import Faithfulness

#: the four RAG metrics, the default set, in the order a sample's judge calls share their
#: prompt prefix best: context precision reads the chunks one by one, the next two reuse them
RAG_METRICS: tuple[str, ...] = (
    "context_precision",
    "faithfulness",
    "context_recall",
    "answer_relevancy",
)

#: every metric by name; a metric module registers its factory here
REGISTRY: dict[str, Callable[[], Metric]] = {
    "faithfulness": Faithfulness,
    "answer_relevancy": AnswerRelevancy,
    "context_recall": ContextRecall,
    "context_precision": ContextPrecision,
}


def build_metric(name: str) -> Metric:
    """A fresh metric object for `name` (KeyError for an unknown name)."""
    return REGISTRY[name]()


def metric_names() -> frozenset[str]:
    return frozenset(REGISTRY)


__all__ = [
    "RAG_METRICS",
    "REGISTRY",
    "Metric",
    "MetricResult",
    "Tools",
    "build_metric",
    "metric_names",
]
