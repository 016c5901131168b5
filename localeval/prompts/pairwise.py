"""Prompts for the pairwise A/B judge.

Plain and short, for the small default judge: the "You are a helpful assistant." system
message, one question, the reply read as a probability over its options instead of
generated. The contexts come first as in the RAG prompts (localeval.prompts.rag), so the
judge evaluates them once per row for every prompt about it, faithfulness included.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.judge import Prompt
from localeval.prompts.rag import SYSTEM_JUDGE, context_segments

#: the labels the two answers are shown under, in the order shown
LABELS: tuple[str, str] = ("A", "B")


def _lead(contexts: Sequence[str] | None) -> tuple[str, ...]:
    if contexts and any(chunk.strip() for chunk in contexts):
        return context_segments(contexts)
    return ()


def _question_lines(question: str, reference: str | None, after_context: bool) -> str:
    text = ("\n\n" if after_context else "") + f"Question: {question.strip()}\n"
    if reference and reference.strip():
        text += f"Reference answer: {reference.strip()}\n"
    return text


def which_is_better(
    question: str,
    contexts: Sequence[str] | None,
    reference: str | None,
    first: str,
    second: str,
) -> Prompt:
    """Direct comparison of two answers shown as A (first) and B (second)."""
    lead = _lead(contexts)
    return Prompt.of(
        SYSTEM_JUDGE,
        *lead,
        _question_lines(question, reference, bool(lead))
        + f"\nAnswer A: {first.strip()}\n\nAnswer B: {second.strip()}\n\n"
        "Which answer is better, A or B? Answer A or B.",
    )


def answers_question(
    question: str, contexts: Sequence[str] | None, reference: str | None, answer: str
) -> Prompt:
    """Does this one answer fully answer the question? (asked of each answer alone)"""
    lead = _lead(contexts)
    return Prompt.of(
        SYSTEM_JUDGE,
        *lead,
        _question_lines(question, reference, bool(lead)) + f"Answer: {answer.strip()}\n\n"
        "Does this answer fully answer the question? Answer Yes or No.",
    )
