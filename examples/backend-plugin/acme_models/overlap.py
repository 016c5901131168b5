"""Judge backend `word-overlap`: a yes/no judge with no model, whose P(Yes) is the share of
the last segment's words (the statement asked about) found in the segments before it (the
contexts). A stand-in for a team's own judge service: the shape of a backend, not a judge
to trust."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.backends import ModelStatus, typed_setting
from localeval.judge import ModelIdentity, Prompt, Usage
from localeval.schema import Schema

WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text)}


class OverlapJudge:
    """Answers from the words of the prompt alone; `floor` is its P(Yes) with no overlap."""

    def __init__(self, name: str, floor: float) -> None:
        self.name = name
        self.floor = floor
        self.usage = Usage()

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(self.name, {"method": "word-overlap"}, {"floor": self.floor})

    def yes_probability(self, prompt: Prompt) -> float:
        self.usage.judge_calls += 1
        *before, asked = prompt.segments or ("",)
        said, known = words(asked), words(" ".join(before))
        share = len(said & known) / len(said) if said else 0.0
        return self.floor + (1.0 - self.floor) * share

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        self.usage.judge_calls += 1
        return [1.0 / len(options)] * len(options)

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        raise NotImplementedError("word-overlap answers yes/no questions only")

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        return True


class OverlapBackend:
    """What localeval asks of a judge backend (localeval.backends.Backend)."""

    keys = frozenset({"floor"})
    cacheable = False  # answering costs nothing: no point keeping the answers

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> float:
        return float(typed_setting(table, "floor", float, where, 0.0))

    def identify(self, name: str, settings: float) -> ModelIdentity:
        return ModelIdentity(name, {"method": "word-overlap"}, {"floor": settings})

    def load(self, name: str, settings: float) -> OverlapJudge:
        return OverlapJudge(name, settings)

    def status(self, settings: float) -> ModelStatus:
        return ModelStatus(None, "(no file)", "word overlap, no model")


JUDGE_BACKEND = OverlapBackend()
