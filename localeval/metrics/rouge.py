"""ROUGE-L: the longest common subsequence of the answer and the reference answer.

Inputs: answer, reference_answer. No model is used.
Output: the ROUGE-L F1 computed by the rouge-score package (Google's re-implementation of
ROUGE-1.5.5): with L the length of the longest common token subsequence,
precision = L / answer tokens, recall = L / reference tokens, F1 their harmonic mean;
in [0, 1]. No stemming (rouge-score's default).
Tokens: lower-cased runs of letters and digits, punctuation dropped, as rouge-score does
for English, and each CJK character a token of its own (rouge-score's own tokenizer
drops every non-ASCII character, so it scores any Chinese answer 0); see
localeval.metrics.parts.reference_tokens.
Details: precision, recall, and the token counts of answer and reference.
Undefined without an answer or a reference answer, or when the reference has no tokens.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from localeval.metrics.base import MetricResult, MetricSpec, Tools
from localeval.metrics.parts.reference import ReferenceMetric
from localeval.metrics.parts.reference_tokens import rouge_tokens

if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer


@cache
def _scorer() -> RougeScorer:
    # imported on first use: rouge-score loads nltk, over a second that every other
    # command would pay
    from rouge_score.rouge_scorer import RougeScorer
    from rouge_score.tokenizers import Tokenizer

    class CjkAwareTokenizer(Tokenizer):
        """rouge-score's English tokens, each CJK character a token."""

        def tokenize(self, text: str) -> list[str]:
            return rouge_tokens(text)

    return RougeScorer(["rougeL"], tokenizer=CjkAwareTokenizer())


class RougeL(ReferenceMetric):
    name = "rouge_l"

    def compare(self, answer: str, reference: str, tools: Tools) -> MetricResult:
        reference_tokens = len(rouge_tokens(reference))
        if reference_tokens == 0:
            return MetricResult.undefined("the reference_answer has no words")
        # rouge-score takes the reference (its "target") first
        result = _scorer().score(reference, answer)["rougeL"]
        return MetricResult(
            result.fmeasure,
            {
                "precision": round(result.precision, 4),
                "recall": round(result.recall, 4),
                "answer_tokens": len(rouge_tokens(answer)),
                "reference_tokens": reference_tokens,
            },
        )


SPEC = MetricSpec(RougeL, help="against reference_answer, no model", order=60)
