"""Answer similarity: how close the answer's meaning is to the reference answer's, by the
embedder alone (no judge): a cheap first look before answer correctness.

Inputs: answer, reference_answer.
Output: the cosine similarity of the embeddings of the whole answer and the whole
reference, clipped to [0, 1]; higher is better. It rewards saying the same thing in other
words, which BLEU and ROUGE-L do not, but it cannot tell "30 days" from "14 days" in an
otherwise identical sentence: answer_correctness asks the judge about each statement.
Details: none beyond the score (the embedder's name is the run's).
Undefined without an answer or a reference answer.
"""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.embedder import cosine
from localeval.metrics.base import (
    MetricBase,
    MetricResult,
    MetricSpec,
    Tools,
    missing_field,
    require_embedder,
)


class AnswerSimilarity(MetricBase):
    name = "answer_similarity"
    needs = ("answer", "reference_answer")
    uses_judge = False
    uses_embedder = True

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.answer is not None and sample.reference_answer is not None
        answer, reference = require_embedder(tools).embed([sample.answer, sample.reference_answer])
        # a negative cosine (opposite directions) is no less unlike than 0: the scale is [0, 1]
        return MetricResult(max(0.0, cosine(answer, reference)), {})


SPEC = MetricSpec(
    AnswerSimilarity,
    help="embedding cosine of answer and reference_answer, no judge",
    order=45,
)
