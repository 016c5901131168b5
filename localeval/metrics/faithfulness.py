"""Faithfulness: how much of the answer the retrieved passages support.

Inputs: question, contexts, answer.
Output: the mean, over the answer's statements, of the judge's probability that the
statement is supported by the passages; in [0, 1], higher is better.
Details: statements, verdicts ("supported" / "unsupported"), support probabilities.
Undefined when the answer or contexts are missing or the answer has no statements.
With an empty list of contexts nothing can be supported: the score is 0, said in details.
Contexts too long for the judge's window: see localeval.metrics.long_context (each
statement is judged against windows of chunks, the best support kept).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localeval.dataset import Sample
from localeval.judge import Judge, Prompt
from localeval.metrics.base import MetricResult, Tools, missing_field, require_judge
from localeval.metrics.long_context import (
    NoRoomForContext,
    describe,
    fits_all,
    split_into_windows,
)
from localeval.prompts import rag
from localeval.text import split_sentences

WINDOWED_SUPPORT = (
    "contexts too long for the judge's window: each statement judged against every window "
    "of consecutive chunks, its best support kept"
)
TOO_LONG_STATEMENT = "a statement is too long for the judge's context window even without contexts"


def verdict_label(probability: float, positive: str, negative: str) -> str:
    return positive if probability >= 0.5 else negative


def statement_support(
    judge: Judge, contexts: Sequence[str], statements: Sequence[str]
) -> tuple[list[float], dict[str, Any] | None]:
    """P(the contexts state s) for each statement, and what was done if they did not fit.

    All statements' prompts share the contexts as prefix, so they are asked window by
    window. Raises NoRoomForContext when a statement alone does not fit.
    """

    def prompts_for(texts: Sequence[str]) -> list[Prompt]:
        return [rag.context_says(texts, s) for s in statements]

    if fits_all(judge, prompts_for(contexts), reserve=1):
        return [judge.yes_probability(p) for p in prompts_for(contexts)], None
    windows = split_into_windows(judge, contexts, prompts_for, reserve=1)
    best = [-1.0] * len(statements)
    best_window = [0] * len(statements)
    for number, window in enumerate(windows, start=1):
        for i, prompt in enumerate(prompts_for(window.texts)):
            probability = judge.yes_probability(prompt)
            if probability > best[i]:
                best[i], best_window[i] = probability, number
    info = describe(windows, len(contexts), WINDOWED_SUPPORT)
    info["best_window"] = best_window
    return best, info


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
        try:
            support, long_context = statement_support(
                require_judge(tools), sample.contexts, statements
            )
        except NoRoomForContext:
            return MetricResult.undefined(TOO_LONG_STATEMENT, statements=statements)
        # 3. the share of the answer that is supported, weighted by the judge's confidence
        details: dict[str, Any] = {
            "statements": statements,
            "verdicts": [verdict_label(p, "supported", "unsupported") for p in support],
            "support": [round(p, 4) for p in support],
        }
        if long_context is not None:
            details["long_context"] = long_context
        return MetricResult(sum(support) / len(support), details)
