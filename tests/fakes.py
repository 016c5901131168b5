"""Test doubles: the library's fakes (localeval.backends.fake), an embedder that records
what it was asked, and a judge that answers by rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from localeval.backends.fake import (
    UNSUPPORTED,
    FakeIdentity,
    HashEmbedder,
    HashJudge,
    OutOfAnswers,
    ScriptedJudge,
)
from localeval.judge import Prompt, Usage
from localeval.schema import Schema

__all__ = [
    "UNSUPPORTED",
    "FakeEmbedder",
    "HashJudge",
    "InterruptingJudge",
    "OutOfAnswers",
    "RuleJudge",
    "ScriptedJudge",
]


class FakeEmbedder(HashEmbedder):
    """The fake embedder, keeping the texts of every call."""

    def __init__(self, dimensions: int = 256):
        super().__init__(dimensions)
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super().embed(texts)


class InterruptingJudge(HashJudge):
    """Ctrl-C after a number of judge calls."""

    def __init__(self, calls: int):
        super().__init__()
        self.calls_left = calls

    def yes_probability(self, prompt: Prompt) -> float:
        self.calls_left -= 1
        if self.calls_left < 0:
            raise KeyboardInterrupt
        return super().yes_probability(prompt)


class RuleJudge(FakeIdentity):
    """Answers from what a prompt says rather than from a script: `yes(prompt)` gives
    P(Yes), `choose(prompt, options)` the option probabilities. For properties that must
    hold whatever order calls come in, such as a verdict that cannot depend on which
    answer is shown first."""

    name = "rules"
    sha256 = "1" * 64

    def __init__(
        self,
        yes: Callable[[Prompt], float],
        choose: Callable[[Prompt, Sequence[str]], list[float]],
    ):
        self.yes = yes
        self.choose = choose
        self.prompts: list[Prompt] = []
        self.usage = Usage()

    def yes_probability(self, prompt: Prompt) -> float:
        self.prompts.append(prompt)
        self.usage.judge_calls += 1
        return self.yes(prompt)

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        self.prompts.append(prompt)
        self.usage.judge_calls += 1
        return self.choose(prompt, options)

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        raise OutOfAnswers("RuleJudge does not generate")

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        return True


#: the contexts a RestoringHashJudge holds as kept states: the demo's Nimbus Drive samples
KEPT_WORD = "Nimbus"


class RestoringHashJudge(HashJudge):
    """The hash judge, restoring a prompt's segments that hold KEPT_WORD instead of reading
    them (a judge with context states on disk): their words are left out of its prompt
    tokens and counted as restored."""

    def __init__(self) -> None:
        super().__init__()
        self.restored = 0
        self.restored_tokens = 0

    def _count(self, prompt: Prompt) -> None:
        super()._count(prompt)
        words = sum(len(s.split()) for s in prompt.segments if KEPT_WORD in s)
        if words:
            self.usage.prompt_tokens -= words
            self.restored += 1
            self.restored_tokens += words
