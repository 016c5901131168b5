"""Context precision: whether the useful chunks are ranked above the noise.

Inputs: question, contexts, and reference_answer (preferred) or answer.
Output: with v_k the usefulness of chunk k for reaching the reference (else the answer),
precision@k = sum(v_1..v_k) / k and score = sum_k precision@k * v_k / sum_k v_k; 0 when
no chunk is useful. In [0, 1].

A chunk's usefulness is how close its meaning is to the target's: the cosine similarity
(clipped at 0) of the mean of its sentences' embeddings and the mean of the target's.
This separates the chunks people marked as needed far better than asking a small judge
"is this chunk useful?" (docs/decisions.md), costs no judge call, and averaging sentences
avoids the embedder's truncation of long chunks.
Details: per-chunk verdicts ("useful" when v_k >= 0.5) and usefulness, and which answer
the chunks were compared with.
Undefined without contexts (or with an empty list), or with neither reference nor answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.data.samples import Sample
from localeval.metrics.base import (
    Details,
    Evidence,
    EvidenceTable,
    MetricResult,
    MetricSpec,
    Note,
    Tools,
    missing_field,
    require_embedder,
    verdict_label,
)
from localeval.metrics.explain import NOTABLE_SHIFT, pairs
from localeval.prompts.neutral import without_orders
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
        # a chunk is compared without what speaks to the evaluator: an order appended to it
        # would move its meaning, and so its rank's weight
        chunks = [without_orders(sample.contexts[i]) or sample.contexts[i] for i in filled]
        vectors = meaning_vectors([target, *chunks], tools)
        useful = [0.0] * len(sample.contexts)
        for row, i in enumerate(filled, start=1):
            # within [0, 1]: float32 rounding puts identical texts at 1.00000007
            useful[i] = min(1.0, max(0.0, float(vectors[0] @ vectors[row])))
        # 3. average precision over the ranks, weighted by usefulness
        return MetricResult(
            average_precision(useful),
            {
                "judged_against": against,
                "verdicts": [verdict_label(v, "useful", "not useful") for v in useful],
                "usefulness": [round(v, 4) for v in useful],
            },
        )


def explain(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
    """Which chunks became useful or irrelevant, and what they were judged against."""
    before = [p for _, p in pairs(base, "verdicts", "usefulness")]
    after = [p for _, p in pairs(new, "verdicts", "usefulness")]
    lines: list[tuple[float, str]] = []
    if base and new and base.get("judged_against") != new.get("judged_against"):
        lines.append(
            (
                1.0,
                f"chunks judged against the {new.get('judged_against')} "
                f"(before: the {base.get('judged_against')})",
            )
        )
    if len(before) != len(after):
        lines.append((1.0, f"{len(after)} chunks retrieved (before: {len(before)})"))
    for rank, (q, p) in enumerate(zip(before, after, strict=False), start=1):
        if (q >= 0.5) != (p >= 0.5):
            state = "became useful" if p >= 0.5 else "became irrelevant"
        elif abs(p - q) >= NOTABLE_SHIFT:
            state = "more useful" if p > q else "less useful"
        else:
            continue
        lines.append((abs(p - q), f"chunk {rank} {state} ({q:.2f} -> {p:.2f})"))
    return lines


def hint(details: Details) -> Evidence | None:
    verdicts = details.get("verdicts")
    if isinstance(verdicts, list):
        useless = [str(k) for k, v in enumerate(verdicts, start=1) if v == "not useful"]
        if useless:
            return Evidence(f"chunks not useful: {', '.join(useless)} of {len(verdicts)}")
    return None


def notes(details: Details) -> list[Note]:
    if "judged_against" not in details:
        return []
    against = details["judged_against"]
    text = "" if against is None else f"Chunks judged useful or not for reaching the {against}."
    return [Note(text, consumes=("judged_against",))]


SPEC = MetricSpec(
    ContextPrecision,
    order=40,
    default_rank=1,
    gate=0.65,
    cause="useful chunks are ranked low and noise comes first",
    remedies=("smaller chunks", "a reranker"),
    explain=explain,
    hint=hint,
    table=EvidenceTable("chunk", "", "usefulness", "not useful", "contexts"),
    notes=notes,
)
