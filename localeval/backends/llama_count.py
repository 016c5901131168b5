"""What the llama.cpp judge's work costs: counted without its weights, timed once with them.

`CountingLlamaJudge` is the llama.cpp judge (localeval.backends.llama_judge) with its GGUF
file's vocabulary loaded and not its weights. Every prompt goes through the judge's own
code: the chat template, the token segments, the reuse of the segments its state holds
already and of the context states kept on disk (a kept state is counted as restored, not
evaluated; one the run would save is counted as kept for the prompts after it), the token
paths of a choice among options, the window checks. So the prompt
tokens and llama.cpp calls it counts are those the judge would evaluate for the same
calls in the same order. Only llama.cpp's work is left out: a decode is counted instead
of run, the logits read after it are all equal (a neutral verdict), and a structured
reply is a typical one (`TYPICAL_TEXT` in every string), since what the judge would write
is not known without it.

`measure_speed` times the real judge once: a batch of prompt tokens, a few small calls,
a short reply after them (localeval.estimate.speed keeps the figures per judge and machine).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

import numpy as np

from localeval.backends.llama_judge import LlamaJudge, batches
from localeval.backends.llama_settings import LlamaCppSettings
from localeval.judge import JudgeSpeed
from localeval.prompts.chat import Segment
from localeval.schema import Object, Schema, Str, max_bytes, typical_value

#: what each string of a counted reply holds: 16 tokens, about what the default judge writes
#: in one of answer relevancy's questions or the rubric's feedback (docs/measurements/speed.md)
TYPICAL_TEXT = " ".join(["word"] * 16)

#: the measurement: a prompt batch of this many tokens from position 0, then small calls
#: of a few tokens each after it, then a short reply (with the default judge: 14 llama.cpp
#: calls, 145 prompt tokens, 8 generated; 31, 314 and 19 before it was halved,
#: docs/measurements/speed.md)
MEASURED_PROMPT_TOKENS = 128
SMALL_CALLS, SMALL_CALL_TOKENS = 4, 4
_TEXT = (
    "A judge model reads each prompt token once and keeps what it has read, so that the "
    "next prompt about the same sample starts where the last one stopped being the same. "
)
_REPLY = Object((("sentence", Str(24)),))


class CountingLlamaJudge(LlamaJudge):
    """The llama.cpp judge without its weights: counts what each call would evaluate.

    `usage` counts as the judge does; `steps` counts the llama.cpp calls for prompt tokens.
    """

    vocab_only = True

    def __init__(self, name: str, settings: LlamaCppSettings):
        super().__init__(name, settings)
        self.steps = 0
        self._neutral = np.zeros(self._n_vocab, dtype=np.float32)
        #: the states the run would have kept by now (nothing is written while counting)
        self._would_keep: set[str] = set()
        #: how many states it would have written, and their tokens (the disk they take)
        self.kept_states = 0
        self.kept_tokens = 0

    def forget(self) -> None:
        """Hold nothing evaluated, as a new process's judge (a count of several runs in
        turn, scripts/count_loop.py); what the runs would keep on disk stays counted."""
        _forget(self)

    def _decode(self, tokens: Segment, logits: bool) -> None:
        self.steps += len(batches(tokens, self._llm.n_batch))

    def _last_logits(self) -> np.ndarray:
        return self._neutral

    def _restore(self, key: str, prefix: Sequence[Segment]) -> bool:
        # the file is not read: a kept state is counted as restored
        if key not in self._would_keep and not (self.states and self.states.contains(key)):
            return False
        self._state[:] = prefix
        self.restored += 1
        self.restored_tokens += sum(len(s) for s in prefix)
        return True

    def _save(self, key: str, prefix: Sequence[Segment], shorter: Sequence[str]) -> None:
        if key not in self._would_keep:
            self.kept_states += 1
            self.kept_tokens += sum(len(segment) for segment in prefix)
        self._would_keep.update([key, *shorter])

    def _reply(self, schema: Schema, limit: int) -> list[int]:
        text = json.dumps(typical_value(schema, TYPICAL_TEXT), separators=(",", ":"))
        output = self._tokenize(text, special=False)
        # the state the real judge is left in: each reply token a segment of its own
        self._state.extend((token,) for token in output)
        return output


def measure_speed(judge: LlamaJudge, loading_started: float) -> JudgeSpeed:
    """The judge's speed on this machine, now; `loading_started`: when it began to load
    (the first call, which maps the weights in, is counted as loading)."""
    llm = judge._llm
    tokens = tuple(judge._tokenize(_TEXT * 8, special=False)[:MEASURED_PROMPT_TOKENS])
    _forget(judge)
    judge._decode(tokens[:1], logits=True)
    load_seconds = time.perf_counter() - loading_started
    _forget(judge)
    started = time.perf_counter()
    judge._decode(tokens, logits=True)  # from position 0: nothing reused
    big = time.perf_counter() - started
    started = time.perf_counter()
    for number in range(SMALL_CALLS):
        part = tokens[number * SMALL_CALL_TOKENS : (number + 1) * SMALL_CALL_TOKENS]
        judge._decode(part, logits=True)
    small = time.perf_counter() - started
    # big = n_big * step + tokens / rate, small = calls * step + small tokens / rate
    n_big = len(batches(tokens, llm.n_batch))
    n_small = SMALL_CALLS * SMALL_CALL_TOKENS
    determinant = n_big * n_small - SMALL_CALLS * len(tokens)
    step = max(0.0, (big * n_small - len(tokens) * small) / determinant)
    per_token = (n_big * small - SMALL_CALLS * big) / determinant
    if per_token <= 0:  # the machine's load changed under the measurement
        per_token = big / len(tokens)
    # the reply goes on from the tokens just read: no prompt of its own to evaluate first
    started = time.perf_counter()
    generated = len(judge._reply(_REPLY, max_bytes(_REPLY) + 1))
    generation = time.perf_counter() - started
    _forget(judge)
    return JudgeSpeed(
        prompt_tokens_per_s=1.0 / per_token,
        step_seconds=step,
        generated_tokens_per_s=max(generated, 1) / generation,
        load_seconds=load_seconds,
    )


def _forget(judge: LlamaJudge) -> None:
    """Nothing evaluated: the next call starts from position 0."""
    judge._llm.n_tokens = 0
    judge._state.clear()
