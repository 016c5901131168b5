"""BLEU-4: n-gram overlap of the answer with the reference answer, computed by sacrebleu.

Inputs: answer, reference_answer. No model is used.
Output: sacrebleu's sentence BLEU divided by 100, in [0, 1]: the geometric mean of the
1- to 4-gram precisions with sacrebleu's documented sentence-level defaults (exponential
smoothing "exp" of orders without a match, effective order), times the brevity penalty
exp(1 - reference length / answer length) when the answer is shorter than the reference.
Case-sensitive, as sacrebleu is by default. The summary's mean is the average sentence
BLEU, not corpus BLEU.
Tokens: text without CJK characters goes through sacrebleu's default "13a" tokenizer.
When either text holds CJK characters, both go through sacrebleu's "zh" tokenizer (each
Han character and CJK punctuation mark a token, the rest as 13a), with kana and hangul
also split one character a token first (localeval.metrics.parts.reference_tokens).
Details: the score on sacrebleu's 0-100 scale, the four n-gram precisions, the brevity
penalty, answer and reference lengths in tokens, the tokenizer.
Undefined without an answer or a reference answer.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from localeval.metrics.base import MetricResult, MetricSpec, Tools
from localeval.metrics.parts.reference import ReferenceMetric
from localeval.metrics.parts.reference_tokens import has_cjk, space_cjk

if TYPE_CHECKING:
    from sacrebleu.metrics.bleu import BLEU


@cache
def _scorer(tokenize: str) -> BLEU:
    # imported on first use: every other command would pay for importing sacrebleu
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(tokenize=tokenize, smooth_method="exp", effective_order=True)


def sentence_bleu(answer: str, reference: str) -> tuple[float, dict[str, object]]:
    """sacrebleu's sentence BLEU (0-100) of `answer` against `reference`, and its parts."""
    if has_cjk(answer) or has_cjk(reference):
        tokenize = "zh"
        answer, reference = space_cjk(answer), space_cjk(reference)
    else:
        tokenize = "13a"
    result = _scorer(tokenize).sentence_score(answer, [reference])
    return result.score, {
        "bleu_100": round(result.score, 4),
        "precisions": [round(p, 4) for p in result.precisions],
        "brevity_penalty": round(result.bp, 4),
        "answer_tokens": result.sys_len,
        "reference_tokens": result.ref_len,
        "tokenizer": tokenize,
    }


class Bleu(ReferenceMetric):
    name = "bleu"

    def compare(self, answer: str, reference: str, tools: Tools) -> MetricResult:
        score, details = sentence_bleu(answer, reference)
        # within [0, 1]: sacrebleu gives a perfect match as 100.00000000000004
        return MetricResult(min(1.0, score / 100.0), details)


SPEC = MetricSpec(Bleu, help="against reference_answer, no model", order=50)
