"""The id of a sample that has no `sample_id`: derived from its question, not its place.

Two runs are compared sample by sample, paired by id. A line number pairs different
questions as soon as one row is inserted or removed above them; the question's text does
not move. So a row without an id is named `q-` and the first 12 hex digits of the sha256 of
its question (Unicode NFC, runs of white space as one space), and a question asked again
in the same file gets its occurrence number: `q-1a2b3c4d5e6f`, `q-1a2b3c4d5e6f-2`, ...
Editing the answer, the contexts or the reference keeps the id; editing the question makes
it another sample, which it is.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections import Counter

PREFIX = "q-"


def _normalised(question: str) -> str:
    return unicodedata.normalize("NFC", " ".join(question.split()))


def content_id(question: str, occurrence: int = 1) -> str:
    """The id of the `occurrence`th row (1-based) of a file asking `question`."""
    digest = hashlib.sha256(_normalised(question).encode("utf-8")).hexdigest()[:12]
    return f"{PREFIX}{digest}" if occurrence == 1 else f"{PREFIX}{digest}-{occurrence}"


class DefaultIds:
    """Hands out content ids for the rows of one file, in file order, numbering repeats."""

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()

    def __call__(self, question: str) -> str:
        key = _normalised(question)
        self._seen[key] += 1
        return content_id(question, self._seen[key])
