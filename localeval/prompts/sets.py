"""Prompt sets: each version of the words the RAG metrics say to the judge, by name.

A judge's models.toml entry names the set it is asked with (`prompts = "rag-3"`, the
default), since wording measured best on one model family need not on another
(docs/judge-quality.md). A set's name is its version: runs record it, and runs asked with
different sets are not compared as equals. A new wording is a new set; a set, once
released, never changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from localeval.errors import ConfigError
from localeval.judge import Prompt
from localeval.prompts import rag
from localeval.text import detect_language

#: what rag-4's relevancy question ends with; its support question ends bare, which the
#: 1.5B judge separated better (docs/judge-quality.md)
TAIL_4 = " Answer Yes or No."


@dataclass(frozen=True)
class RagPrompts:
    """The prompts of faithfulness, context recall and answer relevancy, in one version."""

    version: str
    #: does the context support this statement (contexts, question, statement)?
    #: (faithfulness, context recall)
    context_says: Callable[[Sequence[str], str, str], Prompt]
    #: does the answer (in this language) answer the question?
    answer_answers: Callable[[str, str, str], Prompt]
    #: does the answer dodge the question?
    answer_noncommittal: Callable[[str, str], Prompt]
    #: write n questions the answer would answer (evidence)
    questions_for_answer: Callable[[str, int, str], Prompt]
    #: is this chunk useful for reaching the answer (chunk, question, target, language)?
    #: (context precision, for the languages the judge decides; the same in every set, as
    #: no run before the sets' first one with it asked the judge about chunks)
    chunk_useful: Callable[[str, str, str, str], Prompt] = rag.chunk_useful


RAG_3 = RagPrompts(
    "rag-3",
    lambda contexts, question, statement: rag.context_says(contexts, statement),
    rag.answer_answers,
    rag.answer_noncommittal,
    rag.questions_for_answer,
)

RAG_4 = RagPrompts(
    "rag-4",
    lambda contexts, question, statement: rag.answer_supported(contexts, question, statement, ""),
    lambda question, answer, language: rag.question_then_answer(question, answer, language, TAIL_4),
    rag.answer_noncommittal,
    rag.questions_for_answer,
)


def supported_by_language(contexts: Sequence[str], question: str, statement: str) -> Prompt:
    """rag-5's support question: rag-3's "Does the context above say that ...?" for a
    Chinese sample (by its question), rag-4's "Is the answer supported ...?" for others.
    On the 1.5B judge rag-4's wording lost on both Chinese sets it was measured on
    (docs/judge-quality.md)."""
    if detect_language(question if question.strip() else statement) == "zh":
        return rag.context_says(contexts, statement)
    return rag.answer_supported(contexts, question, statement, "")


RAG_5 = RagPrompts(
    "rag-5",
    supported_by_language,
    RAG_4.answer_answers,
    rag.answer_noncommittal,
    rag.questions_for_answer,
)

#: every released set, by name
PROMPT_SETS: dict[str, RagPrompts] = {s.version: s for s in (RAG_3, RAG_4, RAG_5)}
DEFAULT_PROMPTS = RAG_3.version


def prompt_set(name: str, where: str = "models.toml") -> RagPrompts:
    """The set called `name`; ConfigError naming `where` for an unknown one."""
    if name not in PROMPT_SETS:
        known = ", ".join(sorted(PROMPT_SETS))
        raise ConfigError(f"{where}: unknown prompt set '{name}' (known: {known})")
    return PROMPT_SETS[name]
