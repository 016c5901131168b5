"""The metrics localeval computes, by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from localeval.data.criteria import Criterion
from localeval.metrics.answer_relevancy import AnswerRelevancy
from localeval.metrics.base import Metric, MetricResult, Tools
from localeval.metrics.bleu import Bleu
from localeval.metrics.context_precision import ContextPrecision
from localeval.metrics.context_recall import ContextRecall
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.rouge import RougeL
from localeval.metrics.rubric import Rubric

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
    "bleu": Bleu,
    "rouge_l": RougeL,
    "rubric": Rubric,
}


@dataclass(frozen=True)
class MetricOptions:
    """Settings for the metrics that take any; None keeps a metric's defaults."""

    #: the rubric's criteria (default: accuracy, completeness, clarity)
    rubric_criteria: tuple[Criterion, ...] | None = None


def build_metric(name: str, options: MetricOptions | None = None) -> Metric:
    """A fresh metric object for `name` with the options that apply to it (KeyError for an
    unknown name)."""
    if name == "rubric" and options is not None and options.rubric_criteria is not None:
        return Rubric(options.rubric_criteria)
    return REGISTRY[name]()


def metric_names() -> frozenset[str]:
    return frozenset(REGISTRY)


__all__ = [
    "RAG_METRICS",
    "REGISTRY",
    "Metric",
    "MetricOptions",
    "MetricResult",
    "Tools",
    "build_metric",
    "metric_names",
]
