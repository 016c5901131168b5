"""Focused evidence: a statement judged against the context sentences closest to it.

A small judge loses the thread in a long context, and reading thousands of tokens per
sample costs minutes on a CPU. When a sample's contexts are longer than
FOCUS_ABOVE_CHARS, faithfulness and context recall judge each statement against the
FOCUS_SENTENCES context sentences whose embeddings are closest to the statement's, shown
in the order they appear in the contexts, provided the statements' evidence together is
shorter than the contexts (the whole contexts are read once for all statements, as a
shared prompt prefix); otherwise the contexts are shown whole. What was
kept is recorded in the details under "long_context" (docs/judge-quality.md has the
measurements behind both numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from localeval.embedder import Embedder
from localeval.text import split_sentences

#: contexts longer than this (characters, all chunks together) are judged on focused evidence
FOCUS_ABOVE_CHARS = 6000
#: how many context sentences each statement is judged against
FOCUS_SENTENCES = 8

FOCUSED_SUPPORT = (
    "contexts longer than {chars} characters: each statement judged against the {k} context "
    "sentences closest to it in meaning, in their order in the contexts"
)


@dataclass(frozen=True)
class Focus:
    """The context sentences, and for each statement the ones it is judged against."""

    sentences: list[str]
    #: per statement, indices into `sentences`, in context order
    kept: list[list[int]]

    def evidence(self, statement_index: int) -> list[str]:
        return [self.sentences[i] for i in self.kept[statement_index]]

    def reads_less_than(self, contexts: Sequence[str]) -> bool:
        """Whether the statements' evidence together is shorter than the contexts, which
        the whole-context prompts read once for all statements (their shared prefix)."""
        shown = sum(len(self.sentences[i]) for kept in self.kept for i in kept)
        return shown < sum(len(chunk) for chunk in contexts)

    def describe(self) -> dict[str, object]:
        return {
            "rule": FOCUSED_SUPPORT.format(chars=FOCUS_ABOVE_CHARS, k=FOCUS_SENTENCES),
            "context_sentences": len(self.sentences),
            "kept_sentences": self.kept,
        }


def needs_focus(contexts: Sequence[str]) -> bool:
    return sum(len(chunk) for chunk in contexts) > FOCUS_ABOVE_CHARS


def context_sentences(contexts: Sequence[str]) -> list[str]:
    """Every chunk's sentences, in rank order; a chunk with no sentence end counts as one."""
    sentences: list[str] = []
    for chunk in contexts:
        sentences += split_sentences(chunk) or ([chunk.strip()] if chunk.strip() else [])
    return sentences


def focus(embedder: Embedder, contexts: Sequence[str], statements: Sequence[str]) -> Focus:
    """For each statement, the FOCUS_SENTENCES context sentences nearest to it (cosine)."""
    sentences = context_sentences(contexts)
    vectors = np.asarray(embedder.embed([*statements, *sentences]), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    targets, pool = vectors[: len(statements)], vectors[len(statements) :]
    kept = []
    for target in targets:
        # stable sort: equally close sentences are kept in context order
        nearest = np.argsort(-(pool @ target), kind="stable")[:FOCUS_SENTENCES]
        kept.append(sorted(int(i) for i in nearest))
    return Focus(sentences, kept)
