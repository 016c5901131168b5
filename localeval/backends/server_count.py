"""What a server judge's work costs: its requests counted without sending them, and its
speed timed with a few short requests.

`CountingServerJudge` is the server judge (localeval.backends.server_judge) whose
completion requests are answered here instead of by the server: every prompt is rendered
by the judge's own code, and each request it would send is counted (its `steps`) with
the prompt tokens the server would report for it, counted by the server's tokenizer when
it has one (one small request each), else estimated at four bytes a token. The reply is
neutral: every first token the verdicts read is equally likely (each yes and no
spelling, each character of the options), and a structured reply is a typical one
(localeval.backends.llama_count.TYPICAL_TEXT). A choice among options that other options
extend ("1" of "10") is counted as one request per option prefix, as a server that
tokenizes digits one by one takes it.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from typing import Any

from localeval.backends.llama_count import TYPICAL_TEXT
from localeval.backends.llama_judge import NO_WORDS, YES_WORDS
from localeval.backends.server_judge import ServerJudge
from localeval.backends.server_shapes import token_count
from localeval.judge import JudgeSpeed, Prompt
from localeval.schema import Object, Schema, Str, typical_value

#: what a server is timed on: a short and a long prompt, then a short reply
_WORDS = "Each request reads its prompt and keeps the judge busy for a while. "
_SHORT, _LONG = _WORDS, _WORDS * 24
_REPLY = Object((("sentence", Str(60)),))
#: bytes a token, where the server cannot count them
BYTES_PER_TOKEN = 4


class CountingServerJudge(ServerJudge):
    """The server judge with its completions answered here: counts what each call would
    request. `usage` counts as the judge does; `steps` counts completion requests."""

    steps = 0
    _options: Sequence[str] = ()
    _schema: Schema | None = None

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        self._options = options
        return super().choice_probabilities(prompt, options)

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        self._schema = schema
        return super().generate(prompt, schema)

    def _complete(self, text: str, max_tokens: int, **extra: Any) -> Any:
        self.steps += 1
        self.usage.prompt_tokens += self._count_tokens(text)
        if "logprobs" in extra:
            tokens = {*YES_WORDS, *NO_WORDS, *(c for option in self._options for c in option)}
            neutral = {token: -math.log(len(tokens)) for token in tokens}
            return {"choices": [{"text": "", "logprobs": {"top_logprobs": [neutral]}}]}
        assert self._schema is not None  # only generate() asks for more than a first token
        reply = json.dumps(typical_value(self._schema, TYPICAL_TEXT), separators=(",", ":"))
        usage = {"prompt_tokens": 0, "completion_tokens": self._count_tokens(reply)}
        return {"choices": [{"text": reply, "finish_reason": "stop"}], "usage": usage}

    def _count_tokens(self, text: str) -> int:
        """The server's count of `text`'s tokens, else an estimate from its bytes."""
        tokenizer = self.server.dialect.tokenize
        if tokenizer is not None:
            path, key = tokenizer
            counted = token_count(
                self._connection.post(path, {"model": self.server.model, key: text}, root=True)
            )
            if counted is not None:
                return counted
        return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def measure_speed(judge: ServerJudge) -> JudgeSpeed:
    """The server's speed from here, now: a request with a short prompt and one with a long
    prompt (each read for its first token, as a verdict is), and a short reply."""
    seconds, tokens = [], []
    for text in (_SHORT, _LONG):
        prompt = Prompt.of("Answer Yes or No.", f"{time.time_ns()} {text}Is this a test?")
        before = judge.usage.prompt_tokens
        started = time.perf_counter()
        judge.yes_probability(prompt)
        seconds.append(time.perf_counter() - started)
        tokens.append(max(1, judge.usage.prompt_tokens - before))
    # each request costs `step` beyond its prompt tokens, read at `rate`
    per_token = max(1e-6, (seconds[1] - seconds[0]) / max(1, tokens[1] - tokens[0]))
    step = max(0.0, seconds[0] - tokens[0] * per_token)
    before = judge.usage.generated_tokens
    started = time.perf_counter()
    judge.generate(Prompt.of("Reply in JSON.", "Write one short sentence about the sea."), _REPLY)
    generating = max(1e-6, time.perf_counter() - started - step - tokens[0] * per_token)
    generated = max(1, judge.usage.generated_tokens - before)
    return JudgeSpeed(1.0 / per_token, step, generated / generating)
