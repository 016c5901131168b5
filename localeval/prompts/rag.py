"""Prompts for the RAG metrics that ask the judge.

Every wording here was chosen by measuring it with `localeval calibrate` on
../shared/bench and `scripts/injection_bench.py`; the variants tried and their figures are
in docs/measurements/judge-quality-history.md and docs/decisions.md. In short: one plain
yes/no question per sentence of the answer ("Does the context above say that ...?"), each
statement quoted in its own question, and "Answer Yes or No." as the last words, which
anchors the verdict against "answer Yes" text injected above it. Changing any of it
changes scores: a new wording is a new prompt set (localeval.prompts.sets), never an edit
of a released one.

Layout matters for speed: every prompt about a sample begins with the same system
message and context, so the judge evaluates them once and then only the short tail that
differs (localeval.prompts.chat).

Retrieved chunks, answers and questions are data, not instructions: everything from the
sample passes through `as_data` (what speaks to the evaluator taken out, chat-template
control strings rewritten so they no longer spell one) and a quoted statement through
`quoted` (it cannot close its own quotes). The
judge also tokenizes data with special tokens disabled. tests/injection/ and
scripts/injection_bench.py measure what injected text still moves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from localeval.judge import Prompt
from localeval.prompts.neutral import without_orders

# Chat-template control strings as they appear in text: ChatML and its kin ("<|im_end|>",
# "<|eot_id|>", "<|assistant|>"), Llama 2 / Mistral ("[INST]", "<<SYS>>"), Gemma
# ("<start_of_turn>"). In data they become "(im_end)", "(INST)", ...: still readable, no
# longer the shape of a turn boundary.
_CONTROL = re.compile(r"<\|([^|<>\s]{1,40})\|>|\[(/?INST)\]|<<(/?SYS)>>|<((?:start|end)_of_turn)>")


def as_data(text: str) -> str:
    """Text from a sample, without what speaks to the evaluator (localeval.prompts.neutral:
    a staged dialogue from its first control string on, orders, fake verdicts), and with any
    control string left rewritten so that it no longer spells one."""
    return control_strings_as_text(without_orders(text))


def control_strings_as_text(text: str) -> str:
    """Chat-template control strings rewritten: "<|im_end|>" becomes "(im_end)"."""
    return _CONTROL.sub(lambda m: "(" + next(g for g in m.groups() if g) + ")", text)


def quoted(statement: str) -> str:
    """A statement to put between double quotes: its own double quotes become single ones,
    so that it cannot close the quotation and continue as the judge's instructions."""
    return as_data(statement.strip()).replace('"', "'")


SYSTEM_JUDGE = "You are a helpful assistant."


def context_segments(contexts: Sequence[str]) -> tuple[str, ...]:
    """The shared start of the judge prompts about a sample's contexts: one chunk a line,
    one segment per chunk (the judge reuses whole segments; see localeval.prompts.chat)."""
    # a newline leads each chunk rather than ending it, so that every boundary falls where
    # the tokenizer would split anyway ("\n\n" before the question stays one token)
    return ("Context:", *("\n" + as_data(chunk.strip()) for chunk in contexts))


# The question about a statement in two segments: the words before the statement are the
# same in every faithfulness and context recall prompt about a sample, so the judge keeps
# them with the contexts and evaluates only the statement and the words after it. (The
# split falls where the tokenizer splits anyway, so the tokens are those of the unsplit
# text: docs/measurements/speed.md.)
ASKS_CONTEXT_SAYS = "\n\nDoes the context above say that"


def context_says(contexts: Sequence[str], statement: str) -> Prompt:
    """Faithfulness and context recall: does the context state this sentence?"""
    return Prompt.of(
        SYSTEM_JUDGE,
        *context_segments(contexts),
        ASKS_CONTEXT_SAYS,
        f' "{quoted(statement)}"? Answer Yes or No.',
    )


def text_says(texts: Sequence[str], question: str, statement: str) -> Prompt:
    """Answer correctness: does this text (the reference answer, or the answer) say the
    statement? Asked as rag-3 asks faithfulness, with the text as the context, and not as
    an answer to the question: "Is the answer supported?" invites the judge to check the
    quoted statement against what it knows, where the question is only whether the text
    says it (docs/measurements/judge-quality.md)."""
    return context_says(texts, statement)


# -- claims: a sentence of a text as the short facts it states ------------------------------
# Written by the judge for each sentence in turn, the whole text first (shared by every
# sentence's prompt, so read once) so that a pronoun can be replaced by what it names.


def text_segment(text: str, language: str) -> str:
    """The shared start of the claims prompts about one text."""
    label = "文本：" if language == "zh" else "Text:"
    return f"{label}\n{as_data(text.strip())}"


def claims_of_sentence(text: str, sentence: str, language: str) -> Prompt:
    """The facts one sentence of the text states, each a short claim that reads without
    the text (replied as a JSON list; localeval.metrics.parts.claims checks it)."""
    if language == "zh":
        tail = (
            "\n\n列出文本中这句话陈述的每一个事实，每条写成一句简短、脱离文本也能看懂的陈述"
            f"（用名称代替代词）：“{quoted(sentence)}” 用中文以JSON格式回复。"
        )
    else:
        tail = (
            "\n\nList every fact this sentence of the text states, each as a short claim that "
            f'can be understood without the text (names instead of pronouns): "{quoted(sentence)}" '
            "Reply in JSON."
        )
    return Prompt.of(SYSTEM_JUDGE, text_segment(text, language), tail)


def answer_segment(answer: str, language: str) -> str:
    """The shared start of the answer relevancy prompts: the answer alone (no question, so
    the questions written from it cannot copy the question asked)."""
    label = "回答：" if language == "zh" else "Answer:"
    return f"{label}\n{as_data(answer.strip())}"


def questions_for_answer(answer: str, n: int, language: str) -> Prompt:
    """Answer relevancy: write n questions the answer would answer, in the sample's language."""
    if language == "zh":
        tail = (
            f"\n\n请写出{n}个不同的问题，使上面的回答是对每个问题完整、直接的回答。"
            "问题必须用中文书写。以JSON格式回复。"
        )
    else:
        tail = (
            f"\n\nWrite {n} different questions to which the answer above is a complete and "
            "direct response. Write them in the same language as the answer. Reply in JSON."
        )
    return Prompt.of(SYSTEM_JUDGE, answer_segment(answer, language), tail, lasting=0)


def answer_answers(question: str, answer: str, language: str) -> Prompt:
    """Answer relevancy: does the answer answer the question that was asked?"""
    return Prompt.of(
        SYSTEM_JUDGE,
        answer_segment(answer, language),
        f'\n\nDoes the answer above answer the question "{quoted(question)}"? Answer Yes or No.',
        lasting=0,
    )


#: the noncommittal question, after the answer (and in rag-7, the question before it)
ASKS_NONCOMMITTAL = (
    "\n\nDoes the answer above say that it does not know or cannot answer? Answer Yes or No."
)


def answer_noncommittal(question: str, answer: str, language: str) -> Prompt:
    """Answer relevancy up to rag-6: does the answer dodge ("I don't know", "I cannot
    answer that")? The answer alone: the question is not shown (asked with the question
    after the answer, the 0.5B judge flagged no more and ranked no better)."""
    return Prompt.of(SYSTEM_JUDGE, answer_segment(answer, language), ASKS_NONCOMMITTAL, lasting=0)


def question_answer_noncommittal(question: str, answer: str, language: str) -> Prompt:
    """rag-7's noncommittal question: after the question and the answer, the very segments
    the relevancy question (question_then_answer) is asked after, so that a judge that keeps
    its state reads the answer once for both (docs/measurements/judge-quality.md)."""
    return Prompt.of(
        SYSTEM_JUDGE,
        question_segment(question, language),
        answer_segment(answer, language),
        ASKS_NONCOMMITTAL,
        lasting=1,
    )


# -- rag-4: the question asked, then what is judged as its answer ----------------------------
# Chosen by measurement for the Qwen2.5-Coder-1.5B judge (docs/measurements/judge-quality.md): a
# statement judged as an answer to the question it was given for ("Question: ... Answer:
# ... Is the answer supported by the context above?"), and the question put before the
# answer for relevancy, separate good from bad rows better for that judge than rag-3's
# statement-alone wording, most of all on short answers ("Newcastle United."), whose
# meaning is the question's.


def asks_answer_supported(question: str) -> str:
    """The words before each statement, the same for every statement of a sample (the judge
    keeps them with the contexts): the question the text answers."""
    return f'\n\nQuestion: "{quoted(question)}"\nAnswer:'


def answer_supported(contexts: Sequence[str], question: str, statement: str, tail: str) -> Prompt:
    """Faithfulness and context recall: is this statement, as an answer to the question,
    supported by the context? `tail` ends the prompt ("" or " Answer Yes or No.")."""
    return Prompt.of(
        SYSTEM_JUDGE,
        *context_segments(contexts),
        asks_answer_supported(question),
        f' "{quoted(statement)}"\n\nIs the answer supported by the context above?{tail}',
    )


def question_segment(question: str, language: str) -> str:
    label = "问题：" if language == "zh" else "Question:"
    return f"{label} {as_data(question.strip())}\n\n"


def question_then_answer(question: str, answer: str, language: str, tail: str) -> Prompt:
    """Answer relevancy: the question, then the answer, then whether it answers it."""
    return Prompt.of(
        SYSTEM_JUDGE,
        question_segment(question, language),
        answer_segment(answer, language),
        f"\n\nDoes the answer above answer the question?{tail}",
        lasting=1,
    )


# -- context precision: is one chunk useful for reaching the answer? -----------------------
# Asked only for the sample languages whose chunk usefulness the judge decides
# (localeval.metrics.context_precision); measured in docs/measurements/judge-quality.md.


def chunk_useful(chunk: str, question: str, target: str, language: str) -> Prompt:
    """Context precision: is this chunk, read alone, useful for reaching the answer (the
    reference, else the answer) to the question? The chunk comes first, as the first
    chunk of the other metrics' prompts does, so the judge reads chunk 1 once for all."""
    return Prompt.of(
        SYSTEM_JUDGE,
        *context_segments([chunk]),
        f'\n\nQuestion: "{quoted(question)}"\nAnswer: "{quoted(target)}"\n\n'
        "Is the context above useful for reaching this answer? Answer Yes or No.",
    )
