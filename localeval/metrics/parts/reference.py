"""The metrics that compare the answer with the reference answer (BLEU, ROUGE-L, answer
similarity): one rule for when they are defined, and one place that hands them the two
texts."""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.metrics.base import MetricBase, MetricResult, Tools, missing_field


class ReferenceMetric(MetricBase):
    """A metric of the answer against the reference answer, undefined without either
    (missing_field). A metric built on it declares its `name` and, when it embeds, sets
    `uses_embedder`; `compare` says how the two texts score."""

    name: str
    needs = ("answer", "reference_answer")
    uses_judge = False
    uses_embedder = False

    def compare(self, answer: str, reference: str, tools: Tools) -> MetricResult:
        """The answer's score against the reference, both present and not blank."""
        raise NotImplementedError

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.answer is not None and sample.reference_answer is not None
        return self.compare(sample.answer, sample.reference_answer, tools)
