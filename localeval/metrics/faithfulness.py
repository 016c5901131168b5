"""Faithfulness: how much of the answer the retrieved passages support.

Inputs: question, contexts, answer.
Output: the mean, over the answer's statements, of the judge's probability that the
statement is supported by the passages; in [0, 1], higher is better.
Details: statements, verdicts ("supported" / "unsupported"), support probabilities.
Undefined when the answer or contexts are missing or the answer has no statements.
With an empty list of contexts nothing can be supported: the score is 0, said in details.
"""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.metrics.base import MetricResult, Tools, missing_field, require_judge
from localeval.prompts import rag
from localeval.text import split_sentences


def verdict_label(probability: float, positive: str, negative: str) -> str:
    return positive if probability >= 0.5 else negative


class Faithfulness:
    name = "faithfulness"
    needs = ("question", "contexts", "answer")
    uses_judge = True
    uses_embedder = False

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.answer is not None and sample.contexts is not None
        # 1. the answer's statements: its sentences, as written
        statements = split_sentences(sample.answer)
        if not statements:
            return MetricResult.undefined("the answer has no statements")
        if not any(chunk.strip() for chunk in sample.contexts):
            return MetricResult(
                0.0,
                {
                    "statements": statements,
                    "verdicts": ["unsupported"] * len(statements),
                    "support": [0.0] * len(statements),
                    "note": "no contexts were retrieved, so no statement can be supported",
                },
            )
        # 2. one yes/no question per statement, sharing the passages as prompt prefix
        judge = require_judge(tools)
        support = [judge.yes_probability(rag.context_says(sample.contexts, s)) for s in statements]
        # 3. the share of the answer that is supported, weighted by the judge's confidence
        return MetricResult(
            sum(support) / len(support),
            {
                "statements": statements,
                "verdicts": [verdict_label(p, "supported", "unsupported") for p in support],
                "support": [round(p, 4) for p in support],
            },
        )
