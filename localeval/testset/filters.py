"""The checks a written question must pass before it enters the test set.

Cheap checks run first (is it a question, in the chunk's language, not copied from the
chunk, not a near-duplicate), the judge's verdicts last (is the reference supported by its
chunks; for a question the documents should not answer, do the nearest chunks answer it).
Each failure has a reason name the command counts and lists.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from localeval.metrics.base import Tools, require_judge
from localeval.metrics.parts.statements import statement_support
from localeval.prompts.rag import as_data
from localeval.text import CJK_RANGES, detect_language, split_sentences

NOT_A_QUESTION = "not_a_question"
NOT_STANDALONE = "mentions_the_text"
WRONG_LANGUAGE = "wrong_language"
COPIES_CHUNK = "copies_chunk"
DUPLICATE = "duplicate"
UNSUPPORTED = "unsupported"
ANSWERABLE = "answerable"
TOO_LONG = "too_long"
NO_PARTNER = "no_related_chunk"
REASONS = (
    NOT_A_QUESTION,
    NOT_STANDALONE,
    WRONG_LANGUAGE,
    COPIES_CHUNK,
    DUPLICATE,
    UNSUPPORTED,
    ANSWERABLE,
    TOO_LONG,
    NO_PARTNER,
)

DEFAULT_MAX_OVERLAP = 0.8
DEFAULT_MAX_SIMILARITY = 0.9

# a word (letters and digits) or one CJK character; punctuation does not count as copying
_WORD = re.compile(f"[{CJK_RANGES}]|[^\\W_]+")


def is_question(text: str) -> bool:
    """Ends with a question mark (ASCII or full-width), after any closing quote."""
    return text.strip().rstrip("\"'”’)）」").endswith(("?", "？"))


def question_marks(text: str) -> int:
    """Question marks in a text: a small model that runs on repeats its question."""
    return text.count("?") + text.count("？")


# "according to the text", "in the given passage", "根据上文", "文本中": a user of the RAG
# system has no such text, so the question does not stand on its own ("in the context of
# data protection" is a phrase, not a reference to the chunk)
_MENTIONS_TEXT = re.compile(
    r"\b(?:the|this|given|above|provided)\s+(?:text|passage|paragraph|excerpt|"
    r"context(?!\s+of\b))s?\b|(?:上文|上述|文本|这段|该段|段落|原文)",
    re.IGNORECASE,
)


def mentions_the_text(question: str) -> bool:
    return bool(_MENTIONS_TEXT.search(question))


def in_language(texts: Sequence[str], language: str) -> bool:
    return all(detect_language(t) == language for t in texts)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def copied_share(question: str, chunks: Sequence[str]) -> float:
    """The longest run of the question's words that appears word for word in a chunk, as a
    share of the question's words: 1.0 for a sentence of the chunk with "?" added."""
    asked = words(question)
    if not asked:
        return 0.0
    longest = 0
    for chunk in chunks:
        source = words(chunk)
        # longest common substring over words, by dynamic programming on one row
        row = [0] * (len(source) + 1)
        for word in asked:
            previous = 0
            for j, other in enumerate(source, start=1):
                current = row[j]
                row[j] = previous + 1 if word == other else 0
                longest = max(longest, row[j])
                previous = current
    return longest / len(asked)


#: words two questions must share (Jaccard) to be near-duplicates as well as close in
#: embedding: an English-only embedder puts short Chinese questions about different things
#: at cosine 0.9 and more ("电池设计寿命是多少？", "终端配备什么？": 0.97)
MIN_SHARED_WORDS = 0.3


def shared_words(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' words (CJK: characters)."""
    first, second = set(words(a)), set(words(b))
    return len(first & second) / len(first | second) if first | second else 0.0


def duplicate_of(
    question: str, vector: np.ndarray, accepted: Sequence[str], vectors: Sequence[np.ndarray],
    max_similarity: float,
) -> tuple[int, float] | None:  # fmt: skip
    """The accepted question this one nearly repeats (index, cosine), or None: cosine at
    least `max_similarity` and MIN_SHARED_WORDS of their words in common."""
    if not accepted:
        return None
    similarities = np.stack(vectors) @ vector
    for index in np.argsort(-similarities, kind="stable"):
        if similarities[index] < max_similarity:
            break
        if shared_words(question, accepted[index]) >= MIN_SHARED_WORDS:
            return int(index), float(similarities[index])
    return None


def reference_support(
    tools: Tools, chunks: Sequence[str], reference: str, question: str = ""
) -> list[float]:
    """For each sentence of the reference answer, the judge's verdict that the chunks
    support it: the faithfulness metric's own, asked in the judge's prompt set
    (`tools.prompts.rag`, which may ask it as an answer to `question`), and on the calibrated
    scale when the judge has a map for "supported" (else its raw P(Yes)). A sentence that
    only speaks to the evaluator states nothing and is not asked about, as in faithfulness;
    a reference of nothing else gets [0.0]. Raises NoRoomForContext when a sentence alone
    does not fit the judge."""
    sentences = split_sentences(reference) or [reference]
    statements = [s for s in sentences if as_data(s).strip()]
    if not statements:
        return [0.0]
    raw, _windows = statement_support(
        require_judge(tools),
        chunks,
        statements,
        tools.prompts.rag.support_question(len(statements)),
        question,
    )
    return [tools.calibrated("supported", p) for p in raw]


def answered_probability(tools: Tools, contexts: Sequence[str], question: str) -> float:
    """The judge's P(the contexts answer the question), asked in its prompt set."""
    asked = tools.prompts.generate.context_answers(contexts, question)
    return require_judge(tools).yes_probability(asked)
