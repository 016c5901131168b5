"""What writing a test set produces: the questions, the rejected candidates and why, and
the events a caller is told about as they happen."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from localeval.judge import Usage
from localeval.testset.chunking import Chunk


@dataclass(frozen=True)
class GeneratedQuestion:
    kind: str
    question: str
    reference_answer: str
    #: the chunks that answer it; for an unanswerable question, none
    contexts: tuple[Chunk, ...]
    #: the chunks it was written from (for an unanswerable question, its topic)
    sources: tuple[Chunk, ...]
    #: the judge's P(Yes) that its chunks state each sentence of the reference; for an
    #: unanswerable question, that the nearest chunks answer it
    support: tuple[float, ...] = ()

    @property
    def sample_id(self) -> str:
        """Stable: from the kind, the source chunks and the question."""
        key = [self.kind, [[c.file, c.position, c.text] for c in self.sources], self.question]
        digest = hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()
        return f"{self.kind}-{digest[:10]}"

    def row(self) -> dict[str, Any]:
        """The dataset row: what `localeval evaluate` reads, answer and contexts still empty."""
        return {
            "sample_id": self.sample_id,
            "kind": self.kind,
            "category": self.sources[0].category,
            "question": self.question,
            "reference_answer": self.reference_answer,
            "answer": "",
            "contexts": [],
            "reference_contexts": [c.text for c in self.contexts],
            "source": [c.source() for c in self.sources],
        }


@dataclass(frozen=True)
class Rejection:
    kind: str
    reason: str
    question: str
    sources: tuple[Chunk, ...]
    detail: str

    def where(self) -> str:
        return ", ".join(f"{c.file}:{c.position}" for c in self.sources)


@dataclass
class GenerateResult:
    questions: list[GeneratedQuestion]
    rejections: list[Rejection]
    wanted: dict[str, int]
    usage: Usage
    seconds: float
    #: what the user should know about how far to trust the set (an embedder that cannot
    #: tell a language's chunks apart)
    notes: list[str] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for q in self.questions if q.kind == kind)

    def reasons(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for rejection in self.rejections:
            counts[rejection.reason] = counts.get(rejection.reason, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


class Events(Protocol):
    """What the caller is told while a test set is written (the CLI shows progress)."""

    def phase(self, label: str, total: int) -> None: ...

    def advance(self) -> None: ...

    def rejected(self, rejection: Rejection) -> None: ...


class NoEvents:
    def phase(self, label: str, total: int) -> None:
        pass

    def advance(self) -> None:
        pass

    def rejected(self, rejection: Rejection) -> None:
        pass


Candidate = GeneratedQuestion | Rejection
