"""Context recall: how much of the reference answer the retrieved passages cover.

Inputs: question, contexts, reference_answer.
Output: the mean, over the reference answer's sentences, of the judge's probability that
the sentence can be attributed to the passages; in [0, 1], higher is better.
Details: statements (the reference's sentences), verdicts ("attributed" / "not attributed"),
attribution probabilities.
Undefined without a reference answer or contexts, or when the reference has no statements.
With an empty list of contexts nothing is attributed: the score is 0, said in details.
Contexts too long for the judge's window: as for faithfulness (localeval.metrics.long_context).
"""

from __future__ import annotations

from typing import Any

from localeval.dataset import Sample
from localeval.metrics.base import MetricResult, Tools, missing_field, require_judge
from localeval.metrics.faithfulness import TOO_LONG_STATEMENT, statement_support, verdict_label
from localeval.metrics.long_context import NoRoomForContext
from localeval.text import split_sentences


class ContextRecall:
    name = "context_recall"
    needs = ("question", "contexts", "reference_answer")
    uses_judge = True
    uses_embedder = False

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.reference_answer is not None and sample.contexts is not None
        # 1. the reference answer's statements: its sentences, as written
        statements = split_sentences(sample.reference_answer)
        if not statements:
            return MetricResult.undefined("the reference answer has no statements")
        if not any(chunk.strip() for chunk in sample.contexts):
            return MetricResult(
                0.0,
                {
                    "statements": statements,
                    "verdicts": ["not attributed"] * len(statements),
                    "attribution": [0.0] * len(statements),
                    "note": "no contexts were retrieved, so nothing can be attributed",
                },
            )
        # 2. one yes/no question per statement, sharing the passages as prompt prefix
        try:
            attribution, long_context = statement_support(
                require_judge(tools), sample.contexts, statements
            )
        except NoRoomForContext:
            return MetricResult.undefined(TOO_LONG_STATEMENT, statements=statements)
        # 3. the share of the reference the passages cover
        details: dict[str, Any] = {
            "statements": statements,
            "verdicts": [verdict_label(p, "attributed", "not attributed") for p in attribution],
            "attribution": [round(p, 4) for p in attribution],
        }
        if long_context is not None:
            details["long_context"] = long_context
        return MetricResult(sum(attribution) / len(attribution), details)
