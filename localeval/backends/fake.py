"""Backend "fake": instant, deterministic stand-ins for a judge and an embedder.

For testing a pipeline's plumbing (and localeval's own tests) without a model:

* judge, by default `HashJudge`: every answer a pure function of the prompt, as with a
  real judge (`delay_s` slows each call, to let a test stop a run part-way); with
  `answers = [...]` in the entry a `ScriptedJudge`, which plays them back in order.
* embedder `HashEmbedder`: words hashed into a bag-of-words vector, so texts sharing words
  are similar.

`StandIn` hands out an object built elsewhere (a test's judge) under a registered backend
name. Fakes are never cached: asking them again costs nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localeval.backends import ModelStatus, counted_setting, typed_setting
from localeval.errors import ConfigError
from localeval.judge import JudgeSpeed, ModelIdentity, Prompt, Usage
from localeval.schema import Array, Bool, Enum, Int, Object, Schema, Str, parse
from localeval.text import HAN_RANGES

#: a prompt holding this word gets a near-zero yes-probability from `HashJudge`: a test's
#: way to make an answer unsupported, i.e. to cause a real drop in faithfulness
UNSUPPORTED = "UNSUPPORTED"


class OutOfAnswers(AssertionError):
    """The code under test asked the judge more often (or otherwise) than the script says."""


class FakeIdentity:
    """`identity` from the `name`, `sha256` and (optional) `settings` attributes."""

    name: str
    sha256: str

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(self.name, {"sha256": self.sha256}, getattr(self, "settings", {}))


class ScriptedJudge(FakeIdentity):
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
        answer = self._next(prompt)
        if isinstance(answer, float | int):
            raise OutOfAnswers(f"expected a yes_probability() call for canned answer {answer!r}")
        # a canned answer must itself fit the schema, as the real judge's output always does
        return parse(schema, json.dumps(answer, ensure_ascii=False, separators=(",", ":")))

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        return len(prompt.user.split()) + reserve <= self.n_ctx

    def assert_done(self) -> None:
        assert not self.answers, f"{len(self.answers)} canned answers were not used"


#: the longest a held call of HashJudge waits for its file
HOLD_LIMIT_S = 300.0


class HashJudge(FakeIdentity):
    """Every answer a pure function of the prompt, as with the real judge, but instant."""

    name = "hash-judge"
    sha256 = "1" * 64

    def __init__(self, delay: float = 0.0, hold: tuple[str, Path] | None = None):
        self.usage = Usage()
        self.delay = delay
        self.hold = hold

    def _unit(self, prompt: Prompt, salt: str = "") -> float:
        text = "\0".join((salt, prompt.system, prompt.user, prompt.reply_prefix))
        digest = hashlib.sha256(text.encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64

    def _count(self, prompt: Prompt) -> None:
        self.usage.judge_calls += 1
        self.usage.prompt_tokens += len(prompt.user.split())
        if self.delay:
            time.sleep(self.delay)
        if self.hold is not None and self.hold[0] in prompt.user:
            self._held(self.hold[1])

    @staticmethod
    def _held(until: Path) -> None:
        """Wait until the file `until` exists (at most HOLD_LIMIT_S, never for ever)."""
        waited = 0.0
        while not until.exists() and waited < HOLD_LIMIT_S:
            time.sleep(0.05)
            waited += 0.05

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
        reply = self._fill(schema, prompt, words, "g")
        # a reply's words as its tokens, as prompt tokens are the prompt's words
        self.usage.generated_tokens += len(json.dumps(reply, ensure_ascii=False).split())
        return reply

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


#: a word, or one Chinese character
_WORD = re.compile(f"[{HAN_RANGES}]|\\w+")


class HashEmbedder(FakeIdentity):
    """Hashes words (and CJK characters) into a fixed-size bag-of-words vector: texts that
    share words are similar, identical texts have cosine 1, unrelated texts about 0."""

    name = "fake-embedder"
    sha256 = "f" * 64

    def __init__(self, dimensions: int = 256):
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                bucket = int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimensions
                rows[i, bucket] += 1.0
            norm = np.linalg.norm(rows[i])
            if norm:
                rows[i] /= norm
        return rows


@dataclass(frozen=True)
class FakeJudgeSettings:
    """A fake judge's entry: canned `answers` as JSON (None: answers hashed from the
    prompt), a delay per call, and `hold`: a prompt holding `hold_word` waits until the file
    `hold_until` exists (a test's way to finish one sample after others whatever the load)."""

    answers: str | None = None
    delay_s: float = 0.0
    hold: tuple[str, Path] | None = None


class FakeJudgeBackend:
    keys = frozenset({"answers", "delay_s", "hold_word", "hold_until"})
    cacheable = False

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> FakeJudgeSettings:
        answers = typed_setting(table, "answers", list, where)
        delay = table.get("delay_s", 0.0)
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
            raise ConfigError(f"{where}: 'delay_s' must be a number of seconds, got {delay!r}")
        canned = None if answers is None else json.dumps(answers, ensure_ascii=False)
        word = typed_setting(table, "hold_word", str, where)
        until = typed_setting(table, "hold_until", str, where)
        if (word is None) != (until is None):
            raise ConfigError(f"{where}: 'hold_word' and 'hold_until' go together")
        hold = None if word is None or until is None else (word, base / until)
        return FakeJudgeSettings(canned, float(delay), hold)

    def identify(self, name: str, settings: FakeJudgeSettings) -> ModelIdentity:
        model = HashJudge if settings.answers is None else ScriptedJudge
        return ModelIdentity(name, {"sha256": model.sha256})

    def load(self, name: str, settings: FakeJudgeSettings) -> HashJudge | ScriptedJudge:
        judge: HashJudge | ScriptedJudge
        if settings.answers is None:
            judge = HashJudge(settings.delay_s, settings.hold)
        else:
            judge = ScriptedJudge(json.loads(settings.answers))
        judge.name = name
        return judge

    def counter(self, name: str, settings: FakeJudgeSettings) -> HashJudge | ScriptedJudge:
        """A fresh fake, without its delay, counts as it answers: each call one step, each
        word a token."""
        return self.load(name, dataclasses.replace(settings, delay_s=0.0, hold=None))

    def measure(self, name: str, settings: FakeJudgeSettings) -> JudgeSpeed:
        """A fake's speed is its delay per call."""
        return JudgeSpeed(1e9, settings.delay_s, 1e9)

    def status(self, settings: FakeJudgeSettings) -> ModelStatus:
        return ModelStatus(None, "(no file)", "fake")


class FakeEmbedderBackend:
    keys = frozenset({"dimensions"})
    cacheable = False

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> int:
        return counted_setting(table, "dimensions", where, 256, 1, "a number of dimensions")

    def identify(self, name: str, settings: int) -> ModelIdentity:
        return ModelIdentity(name, {"sha256": HashEmbedder.sha256})

    def load(self, name: str, settings: int) -> HashEmbedder:
        embedder = HashEmbedder(settings)
        embedder.name = name
        return embedder

    def status(self, settings: int) -> ModelStatus:
        return ModelStatus(None, "(no file)", "fake")


class StandIn:
    """A backend that hands out one object built elsewhere (a test's judge or embedder),
    with that object's own identity; `loads` counts how often it was asked for it."""

    keys: frozenset[str] = frozenset()
    cacheable = False

    def __init__(self, model: Any = None):
        self.model = model
        self.loads = 0

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> None:
        return None

    def identify(self, name: str, settings: None) -> ModelIdentity:
        identity: ModelIdentity = self.model.identity
        return identity

    def load(self, name: str, settings: None) -> Any:
        self.loads += 1
        return self.model

    def status(self, settings: None) -> ModelStatus:
        return ModelStatus(None, "(stand-in)", type(self.model).__name__)


JUDGE_BACKEND = FakeJudgeBackend()
EMBEDDER_BACKEND = FakeEmbedderBackend()
