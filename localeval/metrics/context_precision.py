"""Context precision: whether the useful passages are ranked above the noise.

Inputs: question, contexts, and reference_answer (preferred) or answer.
Output: with v_k the judge's probability that passage k is useful for reaching the
reference (else the answer), precision@k = sum(v_1..v_k) / k and
score = sum_k precision@k * v_k / sum_k v_k; 0 when no passage is useful. In [0, 1].
Details: per-chunk verdicts ("useful" / "not useful") and usefulness probabilities, and
which answer the chunks were judged against.
Undefined without contexts (or with an empty list), or with neither reference nor answer.
Contexts too long for the judge's window: each chunk is judged with the chunks before it
in its window (localeval.metrics.long_context); a chunk cut into pieces is as useful as its
most useful piece.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localeval.dataset import Sample
from localeval.judge import Judge, Prompt
from localeval.metrics.base import MetricResult, Tools, missing_field, require_judge
from localeval.metrics.faithfulness import verdict_label
from localeval.metrics.long_context import (
    NoRoomForContext,
    describe,
    fits_all,
    split_into_windows,
)
from localeval.prompts import rag

WINDOWED_USEFULNESS = (
    "contexts too long for the judge's window: each chunk judged with the chunks before it "
    "in its window of consecutive chunks"
)


def chunk_usefulness(
    judge: Judge, question: str, contexts: Sequence[str], target: str
) -> tuple[list[float], dict[str, Any] | None]:
    """P(chunk k is useful to reach `target`) for each chunk, asked right after chunk k is
    read, and what was done if the chunks did not fit; an empty chunk is useless unasked."""

    def prompts_for(texts: Sequence[str]) -> list[Prompt]:
        return [rag.passage_useful(question, texts, len(texts), target)]

    if fits_all(judge, prompts_for(contexts), reserve=1):
        return [
            judge.yes_probability(rag.passage_useful(question, contexts, k, target))
            if chunk.strip()
            else 0.0
            for k, chunk in enumerate(contexts, start=1)
        ], None
    windows = split_into_windows(judge, contexts, prompts_for, reserve=1)
    useful = [0.0] * len(contexts)
    for window in windows:
        for k, part in enumerate(window.parts, start=1):
            if part.text.strip():
                probability = judge.yes_probability(
                    rag.passage_useful(question, window.texts, k, target)
                )
                useful[part.chunk] = max(useful[part.chunk], probability)
    return useful, describe(windows, len(contexts), WINDOWED_USEFULNESS)


def average_precision(useful: Sequence[float]) -> float:
    """Rank-weighted precision of (possibly fractional) usefulness verdicts, in rank order."""
    total = sum(useful)
    if total <= 0:
        return 0.0
    running = 0.0
    weighted = 0.0
    for k, v in enumerate(useful, start=1):
        running += v
        weighted += (running / k) * v
    return weighted / total


class ContextPrecision:
    name = "context_precision"
    needs = ("question", "contexts")
    uses_judge = True
    uses_embedder = False

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.contexts is not None
        if not sample.contexts:
            return MetricResult.undefined("no contexts")
        # 1. what a useful chunk helps to reach: the reference when there is one
        if sample.reference_answer and sample.reference_answer.strip():
            target, against = sample.reference_answer, "reference_answer"
        elif sample.answer and sample.answer.strip():
            target, against = sample.answer, "answer"
        else:
            return MetricResult.undefined("no reference_answer or answer to judge chunks against")
        # 2. one yes/no question per chunk, asked right after that chunk is read; an empty
        #    chunk is useless without asking
        try:
            useful, long_context = chunk_usefulness(
                require_judge(tools), sample.question, sample.contexts, target
            )
        except NoRoomForContext:
            return MetricResult.undefined(
                f"the question and {against} are too long for the judge's context window "
                "even with no chunk shown"
            )
        # 3. average precision over the ranks, weighted by usefulness
        details: dict[str, Any] = {
            "judged_against": against,
            "verdicts": [verdict_label(v, "useful", "not useful") for v in useful],
            "usefulness": [round(v, 4) for v in useful],
        }
        if long_context is not None:
            details["long_context"] = long_context
        return MetricResult(average_precision(useful), details)
