"""Prompts for the rubric judge: a 0-10 score per criterion, an overall score, feedback.

Short and plain, as the small default judge needs: one question per prompt, the score read
as a probability distribution over "0".."10" after the reply prefix "Score: ".

Layout for prefix reuse: every prompt about a sample starts with the same segments (the
contexts, then the question, reference and answer); only the last segment, the question
about one criterion, differs, so the judge evaluates the shared part once per sample.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.data.criteria import Criterion
from localeval.judge import Prompt
from localeval.prompts.rag import SYSTEM_JUDGE, context_segments

SCORE_PREFIX = "Score: "
SCORE_OPTIONS: tuple[str, ...] = tuple(str(n) for n in range(11))


def _about_sample(
    question: str,
    answer: str,
    contexts: Sequence[str] | None,
    reference: str | None,
    ask: str,
    reply_prefix: str = "",
) -> Prompt:
    """The sample's segments, then `ask`; only the contexts last from one version of the
    answers to the next."""
    shown: tuple[str, ...] = ()
    if contexts and any(chunk.strip() for chunk in contexts):
        shown = context_segments(contexts)
    text = ("\n\n" if shown else "") + f"Question: {question.strip()}\n"
    if reference and reference.strip():
        text += f"Reference answer: {reference.strip()}\n"
    text += f"Answer: {answer.strip()}"
    return Prompt.of(SYSTEM_JUDGE, *shown, text, ask, reply_prefix=reply_prefix, lasting=len(shown))


def criterion_score(
    question: str,
    answer: str,
    contexts: Sequence[str] | None,
    reference: str | None,
    criterion: Criterion,
) -> Prompt:
    """How well the answer meets one criterion, 0-10."""
    return _about_sample(
        question,
        answer,
        contexts,
        reference,
        f"\n\nRate the answer's {criterion.name.replace('_', ' ')} ({criterion.description}) "
        "from 0 (worst) to 10 (best). Reply with the number only.",
        SCORE_PREFIX,
    )


def overall_score(
    question: str, answer: str, contexts: Sequence[str] | None, reference: str | None
) -> Prompt:
    """How good the answer is overall, 0-10."""
    return _about_sample(
        question,
        answer,
        contexts,
        reference,
        "\n\nRate the answer overall from 0 (worst) to 10 (best). Reply with the number only.",
        SCORE_PREFIX,
    )


def feedback(
    question: str,
    answer: str,
    contexts: Sequence[str] | None,
    reference: str | None,
    language: str,
) -> Prompt:
    """One sentence on the answer's main weakness, or its strength if it has none."""
    in_language = " Write it in Chinese." if language == "zh" else ""
    return _about_sample(
        question,
        answer,
        contexts,
        reference,
        "\n\nIn one sentence, give feedback on the answer: its main weakness, or its main "
        f'strength if it has none.{in_language} Reply as {{"feedback": "..."}}.',
    )
