"""The kinds of question a test set holds and the replies the judge writes them into.

The reply is grammar-constrained to a schema with bounded strings, so it always parses and
cannot run on. The words that ask for it are the prompt set's (localeval.prompts.testset_questions,
through `tools.prompts.generate`).
"""

from __future__ import annotations

from localeval.schema import Object, Str

#: the kinds of question a test set holds, in the order they are written
SINGLE_FACT = "single_fact"
TWO_CHUNK = "two_chunk"
UNANSWERABLE = "unanswerable"
KINDS = (SINGLE_FACT, TWO_CHUNK, UNANSWERABLE)

#: characters in a fact, a question and a reference answer, by language: room for one
#: clear sentence; a longer reply is a small model running on (or copying its chunk), and
#: each character allowed costs decoding time. Chinese says as much in about a third of the
#: characters.
FACT_CHARS = {"en": 160, "zh": 80}
QUESTION_CHARS = {"en": 150, "zh": 60}
ANSWER_CHARS = {"en": 240, "zh": 100}


def _lang(language: str) -> str:
    return language if language in QUESTION_CHARS else "en"


def question_and_answer(language: str, facts: int = 1) -> Object:
    """The reply to a question-writing prompt: the fact(s) picked from the text first, then
    the question and its answer. Measured with the 0.5B judge on Chinese chunks, asked for
    the question first it copied the chunk's opening sentences as the "question" in 2 of 5
    chunks; made to copy a fact first, it then asked about it in all 5."""
    lang = _lang(language)
    fact = Str(FACT_CHARS[lang], min_chars=2)
    names = ("fact",) if facts == 1 else tuple(f"fact_{n}" for n in range(1, facts + 1))
    return Object(
        (
            *((name, fact) for name in names),
            ("question", Str(QUESTION_CHARS[lang], min_chars=6)),
            ("answer", Str(ANSWER_CHARS[lang], min_chars=2)),
        )
    )


def question_only(language: str) -> Object:
    return Object((("question", Str(QUESTION_CHARS[_lang(language)], min_chars=6)),))


#: the reference answer of a question the documents do not answer: fixed, so it can never
#: claim a fact
NOT_IN_DOCUMENTS = {
    "en": "The documents do not answer this question.",
    "zh": "文档中没有回答这个问题的信息。",
}
