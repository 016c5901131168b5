"""Context precision: whether the useful passages are ranked above the noise.

Inputs: question, contexts, and reference_answer (preferred) or answer.
Output: with v_k the judge's probability that passage k is useful for reaching the
reference (else the answer), precision@k = sum(v_1..v_k) / k and
score = sum_k precision@k * v_k / sum_k v_k; 0 when no passage is useful. In [0, 1].
Details: per-chunk verdicts ("useful" / "not useful") and usefulness probabilities, and
which answer the chunks were judged against.
Undefined without contexts (or with an empty list), or with neither reference nor answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.dataset import Sample
from localeval.metrics.base import MetricResult, Tools, missing_field, require_judge
from localeval.metrics.faithfulness import verdict_label
from localeval.prompts import rag


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
        judge = require_judge(tools)
        useful = [
            judge.yes_probability(rag.passage_useful(sample.question, sample.contexts, k, target))
            if chunk.strip()
            else 0.0
            for k, chunk in enumerate(sample.contexts, start=1)
        ]
        # 3. average precision over the ranks, weighted by usefulness
        return MetricResult(
            average_precision(useful),
            {
                "judged_against": against,
                "verdicts": [verdict_label(v, "useful", "not useful") for v in useful],
                "usefulness": [round(v, 4) for v in useful],
            },
        )
