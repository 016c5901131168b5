"""The words with which the judge writes test questions (`localeval generate`), and
checks that a question the documents should not answer is not answered by them.

Each prompt is written in the chunk's language (English or Chinese), so that the judge
answers in it: asked in English to "write in Chinese", a 0.5B judge drifts back to
English. The replies' schemas are localeval.testset.kinds'. Chunks pass through
`rag.as_data` like every text from the data. A prompt set (localeval.prompts.sets) holds
these wordings; changing one is a new set.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.judge import Prompt
from localeval.prompts import rag


def _text(label: str, chunk: str) -> str:
    return f"{label}\n{rag.as_data(chunk.strip())}"


def _other_than(avoid: str | None, language: str) -> str:
    """The words that ask for another fact (or question) than one written before: a second
    candidate from the same chunk, as greedy decoding repeats itself given the same prompt."""
    if not avoid:
        return ""
    if language == "zh":
        return f"不要选这个：“{rag.quoted(avoid)}”。"
    return f' Pick another one than "{rag.quoted(avoid)}".'


def single_fact(chunk: str, language: str, avoid: str | None = None) -> Prompt:
    """The question and answer of one fact of the chunk (another than `avoid`)."""
    if language == "zh":
        tail = (
            "\n\n先从上面的文本中选出一个具体事实（fact）。"
            + _other_than(avoid, "zh")
            + "再写一个用户"
            "可能会问、答案就是这个事实的简短问题（question），最后只根据上面的文本，用一个完整的句子"
            "回答（answer）。问题要用自己的话，不要照抄文本，不要提到“文本”。全部用中文书写。"
            "以JSON格式回复。"
        )
        return Prompt.of(rag.SYSTEM_JUDGE, _text("文本：", chunk), tail)
    tail = (
        "\n\nFirst pick one specific fact from the text above (fact)."
        + _other_than(avoid, "en")
        + " Then write a short "
        "question a user might ask whose answer is that fact (question): ask in your own words, "
        "do not copy the text, and do not mention the text. Last, answer the question in one "
        "full sentence, using only the text above (answer). Write everything in English. "
        "Reply in JSON."
    )
    return Prompt.of(rag.SYSTEM_JUDGE, _text("Text:", chunk), tail)


def two_chunk(first: str, second: str, language: str) -> Prompt:
    if language == "zh":
        tail = (
            "\n\n先从文本1中选出一个具体事实（fact_1），再从文本2中选出一个相关的事实（fact_2）。"
            "然后写一个简短的问题，回答它需要同时用到这两个事实（question），最后只根据这两段文本，"
            "用一两个完整的句子回答（answer）。问题要用自己的话，不要提到“文本”。"
            "全部用中文书写。以JSON格式回复。"
        )
        return Prompt.of(
            rag.SYSTEM_JUDGE, _text("文本1：", first), "\n\n" + _text("文本2：", second), tail
        )
    tail = (
        "\n\nFirst pick one specific fact from Text 1 (fact_1) and a related fact from Text 2 "
        "(fact_2). Then write a short question whose answer needs both facts (question): ask "
        "in your own words and do not mention the texts. Last, answer it in one or two full "
        "sentences, using only the two texts (answer). Write everything in English. Reply in "
        "JSON."
    )
    return Prompt.of(
        rag.SYSTEM_JUDGE, _text("Text 1:", first), "\n\n" + _text("Text 2:", second), tail
    )


def unanswerable(chunk: str, language: str, avoid: str | None = None) -> Prompt:
    """A question on the chunk's topic that it does not answer (another than `avoid`)."""
    if language == "zh":
        tail = (
            "\n\n请写一个与上面文本主题相同、但文本没有回答的简短问题：问一个文本没有提到的细节。"
            + _other_than(avoid, "zh")
            + "问题中不要提到“文本”。问题必须用中文书写。以JSON格式回复。"
        )
        return Prompt.of(rag.SYSTEM_JUDGE, _text("文本：", chunk), tail)
    tail = (
        "\n\nWrite one short question on the same topic as the text above that the text does "
        "not answer: ask about a detail it does not mention."
        + _other_than(avoid, "en")
        + " Do not mention the text: the question must make sense on its own. Write it in "
        "English. Reply in JSON."
    )
    return Prompt.of(rag.SYSTEM_JUDGE, _text("Text:", chunk), tail)


def context_answers(contexts: Sequence[str], question: str) -> Prompt:
    """Is a question the documents should not answer answered by the chunks nearest it?"""
    return Prompt.of(
        rag.SYSTEM_JUDGE,
        *rag.context_segments(contexts),
        f'\n\nDoes the context above answer the question "{rag.quoted(question)}"? '
        "Answer Yes or No.",
    )
