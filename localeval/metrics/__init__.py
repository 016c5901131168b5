"""The metrics localeval computes, by name."""

from __future__ import annotations

from localeval.metrics.answer_relevancy import AnswerRelevancy
from localeval.metrics.base import Metric, MetricResult, Tools
from localeval.metrics.context_precision import ContextPrecision
from localeval.metrics.context_recall import ContextRecall
from localeval.metrics.faithfulness import Faithfulness

#: the four RAG metrics, in the order a sample's judge calls share their prompt prefix best:
#: context precision reads the passages one by one, the next two reuse them all.
RAG_METRICS: tuple[str, ...] = (
    "context_precision",
    "faithfulness",
    "context_recall",
    "answer_relevancy",
)


def build_metric(name: str) -> Metric:
    """A fresh metric object for `name` (KeyError for an unknown name)."""
    factories = {
        "faithfulness": Faithfulness,
        "answer_relevancy": AnswerRelevancy,
        "context_recall": ContextRecall,
        "context_precision": ContextPrecision,
    }
    return factories[name]()


METRIC_NAMES: frozenset[str] = frozenset(RAG_METRICS)

__all__ = ["METRIC_NAMES", "RAG_METRICS", "Metric", "MetricResult", "Tools", "build_metric"]
