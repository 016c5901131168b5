"""A fake judge for tests that cannot script the order of calls (resumed runs, processes
killed part-way, large synthetic runs): every answer is a pure function of the prompt,
as with the real judge, but instant."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any

from localeval.judge import Prompt, Usage
from localeval.schema import Array, Bool, Enum, Int, Object, Schema, Str

#: a prompt holding this word gets a near-zero yes-probability: tests use it to make an
#: answer unsupported, i.e. to cause a real drop in faithfulness
UNSUPPORTED = "UNSUPPORTED"


class HashJudge:
    name = "hash-judge"
    sha256 = "1" * 64

    def __init__(self, delay: float = 0.0):
        self.usage = Usage()
        self.delay = delay

    def _unit(self, prompt: Prompt, salt: str = "") -> float:
        text = "\0".join((salt, prompt.system, prompt.user, prompt.reply_prefix))
        digest = hashlib.sha256(text.encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64

    def _count(self, prompt: Prompt) -> None:
        self.usage.judge_calls += 1
        self.usage.prompt_tokens += len(prompt.user.split())
        if self.delay:
            time.sleep(self.delay)

    def yes_probability(self, prompt: Prompt) -> float:
        self._count(prompt)
        if UNSUPPORTED in prompt.segments[-1]:
            return 0.01
        return round(self._unit(prompt), 4)

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        self._count(prompt)
        weights = [self._unit(prompt, option) for option in options]
        return [w / sum(weights) for w in weights]

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        self._count(prompt)
        words = prompt.user.split() or ["word"]
        return self._fill(schema, prompt, words, "g")

    def _fill(self, schema: Schema, prompt: Prompt, words: list[str], salt: str) -> Any:
        pick = int(self._unit(prompt, salt) * 2**32)
        if isinstance(schema, Str):
            text = " ".join(words[(pick + i) % len(words)] for i in range(6))
            return text.replace('"', "").replace("\\", "")[: schema.max_chars] or "x"
        if isinstance(schema, Enum):
            return schema.values[pick % len(schema.values)]
        if isinstance(schema, Bool):
            return bool(pick % 2)
        if isinstance(schema, Int):
            return schema.low + pick % (schema.high - schema.low + 1)
        if isinstance(schema, Array):
            return [
                self._fill(schema.item, prompt, words, f"{salt}.{i}")
                for i in range(schema.min_items)
            ]
        if isinstance(schema, Object):
            return {k: self._fill(s, prompt, words, f"{salt}.{k}") for k, s in schema.fields}
        raise TypeError(schema)

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        return True
