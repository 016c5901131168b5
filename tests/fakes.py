"""Test doubles: a judge that plays back canned answers, and a deterministic embedder."""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from localeval.judge import Prompt, Usage
from localeval.schema import Schema, parse


class OutOfAnswers(AssertionError):
    """The code under test asked the judge more often than the test expected."""


class ScriptedJudge:
    """Answers each call with the next canned answer: a float for `yes_probability`, a list
    of floats for `choice_probabilities`, a JSON value for `generate`. Raises when the script
    runs out or the call kind does not match, so a test fails if a metric asks more, fewer or
    other questions than it should."""

    name = "scripted"
    sha256 = "0" * 64

    def __init__(self, answers: Iterable[Any] = (), n_ctx: int = 100_000):
        self.answers: deque[Any] = deque(answers)
        self.prompts: list[Prompt] = []
        self.usage = Usage()
        self.n_ctx = n_ctx

    def _next(self, prompt: Prompt) -> Any:
        self.prompts.append(prompt)
        if not self.answers:
            raise OutOfAnswers(f"no canned answer left for prompt: {prompt.user[-200:]!r}")
        self.usage.judge_calls += 1
        self.usage.prompt_tokens += len(prompt.user.split())
        return self.answers.popleft()

    def yes_probability(self, prompt: Prompt) -> float:
        answer = self._next(prompt)
        if not isinstance(answer, float | int) or isinstance(answer, bool):
            raise OutOfAnswers(f"expected a generate() call for canned answer {answer!r}")
        return float(answer)

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        answer = self._next(prompt)
        if not isinstance(answer, list) or len(answer) != len(options):
            raise OutOfAnswers(f"expected {len(options)} option probabilities, got {answer!r}")
        return [float(p) for p in answer]

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        import json

        answer = self._next(prompt)
        if isinstance(answer, float | int):
            raise OutOfAnswers(f"expected a yes_probability() call for canned answer {answer!r}")
        # a canned answer must itself fit the schema, as the real judge's output always does
        return parse(schema, json.dumps(answer, ensure_ascii=False, separators=(",", ":")))

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        return len(prompt.user.split()) + reserve <= self.n_ctx

    def assert_done(self) -> None:
        assert not self.answers, f"{len(self.answers)} canned answers were not used"


class FakeEmbedder:
    """Hashes words (and CJK characters) into a fixed-size bag-of-words vector: texts that
    share words are similar, identical texts have cosine 1, unrelated texts about 0."""

    name = "fake-embedder"
    sha256 = "f" * 64

    def __init__(self, dimensions: int = 256):
        self.dimensions = dimensions
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[\u4e00-\u9fff]|\w+", text.lower()):
                bucket = int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimensions
                rows[i, bucket] += 1.0
            norm = np.linalg.norm(rows[i])
            if norm:
                rows[i] /= norm
        return rows


class RuleJudge:
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
