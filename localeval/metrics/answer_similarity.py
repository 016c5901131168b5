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

from localeval.embedder import cosine
from localeval.metrics.base import MetricResult, MetricSpec, Tools, require_embedder
from localeval.metrics.parts.reference import ReferenceMetric


class AnswerSimilarity(ReferenceMetric):
    name = "answer_similarity"
    uses_embedder = True

    def compare(self, answer: str, reference: str, tools: Tools) -> MetricResult:
        answer_vector, reference_vector = require_embedder(tools).embed([answer, reference])
        # a negative cosine (opposite directions) is no less unlike than 0: the scale is [0, 1]
        return MetricResult(max(0.0, cosine(answer_vector, reference_vector)), {})


SPEC = MetricSpec(
    AnswerSimilarity,
    help="embedding cosine of answer and reference_answer, no judge",
    order=45,
)
