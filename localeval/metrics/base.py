"""What every metric shares: its result type, the tools it is given, and field checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from localeval.data.samples import Sample
from localeval.embedder import Embedder
from localeval.judge import Judge


@dataclass
class MetricResult:
    """A metric's score for one sample, with its evidence.

    `score` is None when the metric is undefined for the sample; `reason` then says why.
    """

    score: float | None
    details: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None

    @classmethod
    def undefined(cls, reason: str, **details: Any) -> MetricResult:
        return cls(None, dict(details), reason)


@dataclass
class Tools:
    """The models a metric may use; either is None when no requested metric needs it."""

    judge: Judge | None = None
    embedder: Embedder | None = None
    #: per metric, where a statement's verdict label flips on the judge's scale: the
    #: judge's thresholds in models.toml (a small judge's probabilities are compressed);
    #: 0.5, the likelier answer, for metrics without one
    verdict_thresholds: Mapping[str, float] = field(default_factory=dict)


class Metric(Protocol):
    """A metric scores one sample from the fields it names in `needs`."""

    name: str
    needs: tuple[str, ...]
    uses_judge: bool
    uses_embedder: bool

    def score(self, sample: Sample, tools: Tools) -> MetricResult: ...


_FIELD_WORDS = {
    "answer": "no answer",
    "contexts": "no contexts",
    "reference_answer": "no reference_answer",
    "question": "no question",
}


def missing_field(sample: Sample, needs: tuple[str, ...]) -> str | None:
    """The reason a sample cannot be scored for lack of a field, or None if all are present."""
    for name in needs:
        value = getattr(sample, name)
        if value is None or (isinstance(value, str) and not value.strip()):
            return _FIELD_WORDS.get(name, f"no {name}")
    return None


def require_judge(tools: Tools) -> Judge:
    if tools.judge is None:
        raise RuntimeError("metric needs a judge but none was loaded")  # a runner bug
    return tools.judge


def require_embedder(tools: Tools) -> Embedder:
    if tools.embedder is None:
        raise RuntimeError("metric needs an embedder but none was loaded")  # a runner bug
    return tools.embedder
