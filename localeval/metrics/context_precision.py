"""Context precision: whether the useful chunks are ranked above the noise.

Inputs: question, contexts, and reference_answer (preferred) or answer.
Output: with v_k the usefulness of chunk k for reaching the reference (else the answer),
precision@k = sum(v_1..v_k) / k and score = sum_k precision@k * v_k / sum_k v_k; 0 when
no chunk is useful. In [0, 1].

A chunk's usefulness is how close its meaning is to the target's: the cosine similarity
(clipped at 0) of the mean of its sentences' embeddings and the mean of the target's.
Measured on ../shared/bench with the default models, this separates the chunks people
marked as needed far better than the 0.5B judge asked "is this chunk useful?" (WiCE
chunk AUC about 0.86 against 0.53-0.59 for four prompt wordings), costs no judge call, and
averaging sentences avoids the embedder's truncation of long chunks.
Details: per-chunk verdicts ("useful" when v_k >= 0.5) and usefulness, and which answer
the chunks were compared with.
Undefined without contexts (or with an empty list), or with neither reference nor answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.data.samples import Sample
from localeval.metrics.base import MetricResult, Tools, missing_field, require_embedder
from localeval.metrics.faithfulness import verdict_label
from localeval.text import split_sentences


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


def meaning_vectors(texts: Sequence[str], tools: Tools) -> np.ndarray:
    """One unit vector per text: the mean of its sentences' embeddings, one batch for all."""
    embedder = require_embedder(tools)
    pieces = [split_sentences(t) or [t] for t in texts]
    flat = [sentence for sentences in pieces for sentence in sentences]
    vectors = embedder.embed(flat)
    out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float64)
    start = 0
    for i, sentences in enumerate(pieces):
        mean = vectors[start : start + len(sentences)].mean(axis=0)
        start += len(sentences)
        norm = float(np.linalg.norm(mean))
        out[i] = mean / norm if norm else mean
    return out


class ContextPrecision:
    name = "context_precision"
    needs = ("question", "contexts")
    uses_judge = False
    uses_embedder = True

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
        # 2. each chunk's usefulness: closeness of meaning to the target; an empty chunk is
        #    useless without asking
        filled = [i for i, chunk in enumerate(sample.contexts) if chunk.strip()]
        vectors = meaning_vectors([target, *(sample.contexts[i] for i in filled)], tools)
        useful = [0.0] * len(sample.contexts)
        for row, i in enumerate(filled, start=1):
            useful[i] = max(0.0, float(vectors[0] @ vectors[row]))
        # 3. average precision over the ranks, weighted by usefulness
        return MetricResult(
            average_precision(useful),
            {
                "judged_against": against,
                "verdicts": [verdict_label(v, "useful", "not useful") for v in useful],
                "usefulness": [round(v, 4) for v in useful],
            },
        )
