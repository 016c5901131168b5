"""Focused evidence: each statement checked against the few sentences of a long evidence
text that bear on it, not the whole text (MiniCheck's way).

A long reference or long retrieved passages bury the one sentence that decides a claim,
and a small judge reads a text on the topic as saying what it does not. For an evidence
text of more than LONG_WORDS words (CJK: LONG_CJK characters), each statement is asked
against its FOCUS_SENTENCES closest sentences, in the text's order: closeness is the mean
of the embedder's cosine (when a run has an embedder for the text's language) and the
share of the statement's words the sentence holds. The sentences chosen are in the
details (`focused_evidence`: their numbers per statement).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.embedder import Embedder
from localeval.metrics.parts.reference_tokens import has_cjk, rouge_tokens
from localeval.text import split_sentences

LONG_WORDS, LONG_CJK = 150, 300
FOCUS_SENTENCES = 3


def is_long(texts: Sequence[str]) -> bool:
    """Whether evidence this long is asked about sentence by sentence."""
    joined = "\n".join(texts)
    return len(rouge_tokens(joined)) > (LONG_CJK if has_cjk(joined) else LONG_WORDS)


def evidence_sentences(texts: Sequence[str]) -> list[str]:
    """The evidence's sentences, chunk after chunk."""
    return [s for text in texts for s in split_sentences(text)]


def overlap(statement: str, sentence: str) -> float:
    """The share of the statement's words (CJK characters) the sentence holds."""
    words = rouge_tokens(statement)
    held = set(rouge_tokens(sentence))
    return sum(w in held for w in words) / len(words) if words else 0.0


def closest(
    statements: Sequence[str], sentences: Sequence[str], embedder: Embedder | None
) -> list[list[int]]:
    """For each statement, the numbers of its FOCUS_SENTENCES closest sentences, in order."""
    scores = np.array([[overlap(s, t) for t in sentences] for s in statements])
    if embedder is not None and not has_cjk("".join(sentences)):
        vectors = embedder.embed([*statements, *sentences])
        similarity = vectors[: len(statements)] @ vectors[len(statements) :].T
        scores = (scores + np.clip(similarity, 0.0, 1.0)) / 2
    chosen = []
    for row in scores:
        # the highest scores; the earlier sentence first among equals (a stable order)
        best = sorted(range(len(row)), key=lambda i: (-row[i], i))[:FOCUS_SENTENCES]
        chosen.append(sorted(best))
    return chosen
