"""Prompts for the RAG metrics that ask the judge (context precision asks the embedder).

Wording was chosen by measurement (`localeval calibrate` on ../shared/bench): with a
0.5B judge, the plain "Does the context above say that ...?" asked of one sentence at a
time ranks faithful answers above hallucinated ones far more often than prompts that add
the question, the whole answer, or a strict fact-checker persona.

"Answer Yes or No." after each question stays, for robustness, not for accuracy. Without
it (or with it before the question) the judge separated better on the first rows of the
bench sets (ROC AUC: HaluEval-QA 0.86 -> 0.96, WikiEval 0.84 -> 0.91; answer relevancy
0.69 -> 0.73; UHGEval Spearman 0.73 -> 0.68), but text injected into a chunk moved it
five times as far (scripts/injection_bench.py, faithfulness +0.02 -> +0.12 towards what
the attack wanted, context recall -0.03 -> +0.08): the instruction as the last words
before the reply anchors the verdict against "answer Yes" text above it. A wording
between the two, "Reply with one word: Yes or No.", was no way out: ROC AUC HaluEval-QA
0.87, WikiEval 0.88, but UHGEval Spearman 0.63 and injected text moved faithfulness
+0.07. Nor was the instruction in the system message with the question ending at "?"
(HaluEval-QA 0.92; injected text: faithfulness +0.07, context recall +0.02 instead of
-0.03).

Each statement is quoted in its own question, though the answer is then read twice (its
sentences here, the whole of it for answer relevancy): with the answer read once, as a
numbered list after the contexts, and questions that name a sentence by its number ("Is
sentence [2] of the answer stated in the context above?"), the 0.5B judge ranked
WikiEval's faithful answers first in 0.54-0.58 of the pairs instead of 1.00.

Layout matters for speed: every prompt about a sample begins with the same system
message and context, so the judge evaluates them once and then only the short tail that
differs (see localeval.backends.llama_cpp).

Retrieved chunks, answers and questions are data, not instructions: everything from the
sample passes through `as_data` (chat-template control strings rewritten so they no longer
spell one) and a quoted statement through `quoted` (it cannot close its own quotes). The
judge also tokenizes data with special tokens disabled. tests/injection/ and
scripts/injection_bench.py measure what injected text still moves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from localeval.judge import Prompt

# Chat-template control strings as they appear in text: ChatML and its kin ("<|im_end|>",
# "<|eot_id|>", "<|assistant|>"), Llama 2 / Mistral ("[INST]", "<<SYS>>"), Gemma
# ("<start_of_turn>"). In data they become "(im_end)", "(INST)", ...: still readable, no
# longer the shape of a turn boundary.
_CONTROL = re.compile(r"<\|([^|<>\s]{1,40})\|>|\[(/?INST)\]|<<(/?SYS)>>|<((?:start|end)_of_turn)>")


def as_data(text: str) -> str:
    """Text from a sample, with chat-template control strings neutralised."""
    return _CONTROL.sub(lambda m: "(" + next(g for g in m.groups() if g) + ")", text)


def quoted(statement: str) -> str:
    """A statement to put between double quotes: its own double quotes become single ones,
    so that it cannot close the quotation and continue as the judge's instructions."""
    return as_data(statement.strip()).replace('"', "'")


SYSTEM_JUDGE = "You are a helpful assistant."


def context_segments(contexts: Sequence[str]) -> tuple[str, ...]:
    """The shared start of the judge prompts about a sample's contexts: one chunk a line,
    one segment per chunk (the judge reuses whole segments; see localeval.backends.llama_cpp)."""
    # a newline leads each chunk rather than ending it, so that every boundary falls where
    # the tokenizer would split anyway ("\n\n" before the question stays one token)
    return ("Context:", *("\n" + as_data(chunk.strip()) for chunk in contexts))


# The question about a statement in two segments: the words before the statement are the
# same in every faithfulness and context recall prompt about a sample, so the judge keeps
# them with the contexts and evaluates only the statement and the words after it. (The
# split falls where the tokenizer splits anyway: measured on the 2,149 sentences of
# ../shared/bench, the tokens are the same as those of the unsplit text.)
ASKS_CONTEXT_SAYS = "\n\nDoes the context above say that"


def context_says(contexts: Sequence[str], statement: str) -> Prompt:
    """Faithfulness and context recall: does the context state this sentence?"""
    return Prompt.of(
        SYSTEM_JUDGE,
        *context_segments(contexts),
        ASKS_CONTEXT_SAYS,
        f' "{quoted(statement)}"? Answer Yes or No.',
    )


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
    return Prompt.of(SYSTEM_JUDGE, answer_segment(answer, language), tail)


def answer_answers(question: str, answer: str, language: str) -> Prompt:
    """Answer relevancy: does the answer answer the question that was asked?"""
    return Prompt.of(
        SYSTEM_JUDGE,
        answer_segment(answer, language),
        f'\n\nDoes the answer above answer the question "{quoted(question)}"? Answer Yes or No.',
    )


def answer_noncommittal(answer: str, language: str) -> Prompt:
    """Answer relevancy: does the answer dodge ("I don't know", "I cannot answer that")?

    The question is not repeated here: measured on WikiEval with the 0.5B judge, asking
    with it ("The answer above was given to the question ...; does the answer avoid it?")
    flagged no more and ranked no better, and cost the question's tokens a second time."""
    return Prompt.of(
        SYSTEM_JUDGE,
        answer_segment(answer, language),
        "\n\nDoes the answer above say that it does not know or cannot answer? Answer Yes or No.",
    )
