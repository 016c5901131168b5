"""A judge on an inference server: the Judge protocol over OpenAI's `/v1/completions`.

The prompt is rendered by localeval through the model's chat template (the same text the
in-process judge evaluates, reply prefix included, which a chat endpoint cannot take) and
sent as text. Then, as in-process:

* a yes/no verdict is read, not generated: the likeliest first reply tokens and their
  log-probabilities (`logprobs`), renormalised over the yes/no spellings. A reply that
  gives neither any probability is `VerdictUnreadable`, never a silent 0.5;
* a choice among options ("0".."10") is read the same way, one request per option prefix
  that other options extend ("1" of "10");
* a structured reply is generated greedily (temperature 0, a fixed seed) under the
  server's constraint from the same typed schema, with the same bound on its length, so
  it always parses; one that does not means the server ignored the constraint.

`session()` gives a judge for one sample in flight: its own usage counter and its own
connection, so a sample's prompts, which share their prefix, go to the server in order on
one stream. `cancel()` stops every session's request at once (Ctrl-C).
"""

from __future__ import annotations

import copy
import math
import re
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.backends.llama_judge import NO_WORDS, YES_WORDS
from localeval.backends.server_http import Connection, Endpoint, ServerError
from localeval.backends.server_shapes import (
    TOP_LOGPROBS,
    Dialect,
    constraint_fields,
    first_token_logprobs,
    logsumexp,
    prompt_tokens,
    reply_text,
    token_count,
)
from localeval.errors import JudgeError, VerdictUnreadable
from localeval.judge import ModelIdentity, Prompt, Usage
from localeval.prompts.chat import ChatTemplate
from localeval.schema import Schema, max_bytes, parse

#: spellings of special tokens: the server parses them in the text it is sent, so data
#: that holds one ("<|im_end|>" in a retrieved chunk) would end the user's turn there
_SPECIAL = re.compile(r"<\|[A-Za-z0-9_.:\- ]{1,40}\|>|</?s>")
#: a reply read for its first tokens only; probabilities this small do not move a verdict
_NEGLIGIBLE = 1e-9


def defuse(text: str) -> str:
    """`text` with every special-token spelling broken by a zero-width space."""
    return _SPECIAL.sub(lambda m: m.group(0)[0] + "\u200b" + m.group(0)[1:], text)


@dataclass
class ServerCounts:
    """Requests sent to the server by a judge and all its sessions (scripts/bench.py)."""

    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self) -> None:
        with self.lock:
            self.requests += 1


@dataclass(frozen=True)
class ServerModel:
    """What a server judge needs to know about its server, found when it is identified."""

    endpoint: Endpoint
    model: str
    dialect: Dialect
    constraint: str
    template: ChatTemplate
    n_ctx: int
    seed: int
    concurrency: int


class ServerJudge:
    """Judge served by an OpenAI-compatible server (llama.cpp, vLLM, Ollama)."""

    def __init__(self, identity: ModelIdentity, server: ServerModel):
        self.identity = identity
        self.name = identity.name
        self.server = server
        self.concurrency = server.concurrency
        self.n_ctx = server.n_ctx
        self.usage = Usage()
        self.counts = ServerCounts()
        self._connection = Connection(server.endpoint, self._retried)
        self._sessions: weakref.WeakSet[ServerJudge] = weakref.WeakSet()

    def _retried(self) -> None:
        self.usage.retries += 1

    # -- samples in flight --------------------------------------------------------------

    def session(self) -> ServerJudge:
        """A judge for one sample: the same server, its own counter and connection."""
        session = copy.copy(self)
        session.usage = Usage()
        session._connection = Connection(self.server.endpoint, session._retried)
        session._sessions = weakref.WeakSet()
        self._sessions.add(session)
        return session

    def cancel(self) -> None:
        """Stop every session's request in progress now; they send no other."""
        for session in list(self._sessions):
            session._connection.abort()

    def close(self) -> None:
        self._connection.close()

    # -- talking to the server ----------------------------------------------------------

    def render(self, prompt: Prompt) -> str:
        """The prompt as the model reads it, through its chat template."""
        return self.server.template.render(
            Prompt(
                defuse(prompt.system),
                tuple(defuse(s) for s in prompt.segments),
                defuse(prompt.reply_prefix),
            )
        )

    def _complete(self, text: str, max_tokens: int, **extra: Any) -> Any:
        server = self.server
        body: dict[str, Any] = {
            "model": server.model,
            "prompt": text,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "seed": server.seed,
            "stream": False,
            **server.dialect.fixed,
            **extra,
        }
        self.counts.add()
        reply = self._connection.post("/completions", body)
        self.usage.prompt_tokens += prompt_tokens(reply)[0]
        return reply

    def _next_tokens(self, text: str) -> dict[str, float]:
        """Log-probabilities of the likeliest tokens to follow `text`, by token text."""
        reply = self._complete(text, 1, logprobs=TOP_LOGPROBS, **self.server.dialect.read)
        return first_token_logprobs(reply)

    # -- the Judge protocol -------------------------------------------------------------

    def yes_probability(self, prompt: Prompt) -> float:
        started = time.perf_counter()
        first = self._next_tokens(self.render(prompt))
        yes = [lp for token, lp in first.items() if token in YES_WORDS]
        no = [lp for token, lp in first.items() if token in NO_WORDS]
        self._count_call(started)
        if not yes and not no:
            raise VerdictUnreadable(
                "the judge server's likeliest first reply tokens hold no Yes or No "
                f"({_shown(first)})"
            )
        if not no:
            return 1.0
        if not yes:
            return 0.0
        return 1.0 / (1.0 + math.exp(logsumexp(no) - logsumexp(yes)))

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        started = time.perf_counter()
        if any(not o for o in options) or len(set(options)) < len(options):
            raise JudgeError(f"options must be distinct and non-empty: {list(options)!r}")
        text = self.render(prompt)
        memo: dict[str, dict[str, float]] = {}

        def after(done: str) -> dict[str, float]:
            if done not in memo:
                memo[done] = self._next_tokens(text + done)
            return memo[done]

        def probability(option: str, done: str) -> float:
            """P(the reply is `option` | it began with `done`), as far as the server's
            likeliest tokens show it."""
            if option == done:
                if not any(o != done and o.startswith(done) for o in options):
                    return 1.0  # nothing else begins so: the reply is this option
                # an option that others extend counts only if the reply stops there. A token
                # without text (llama-server spells the end-of-reply token so) continues
                # nothing: it is the reply stopping
                following = after(done)
                continuing = [
                    lp
                    for token, lp in following.items()
                    if token and any(o != done and o.startswith(done + token) for o in options)
                ]
                return max(0.0, 1.0 - math.exp(logsumexp(continuing)))
            total = 0.0
            for token, lp in after(done).items():
                if token and option[len(done) :].startswith(token) and lp > math.log(_NEGLIGIBLE):
                    total += math.exp(lp) * probability(option, done + token)
            return total

        values = [probability(option, "") for option in options]
        self._count_call(started)
        if sum(values) <= 0.0:
            raise VerdictUnreadable(
                f"the judge server's likeliest first reply tokens begin none of {list(options)} "
                f"({_shown(after(''))})"
            )
        return [v / sum(values) for v in values]

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        started = time.perf_counter()
        limit = max_bytes(schema) + 1  # as in-process: every token adds >= 1 byte
        fields = constraint_fields(self.server.constraint, schema)
        reply = self._complete(self.render(prompt), limit, **fields)
        text, reason = reply_text(reply)
        self.usage.generated_tokens += prompt_tokens(reply)[1]
        self._count_call(started)
        if reason == "length":
            raise ServerError(
                f"the judge server's reply was cut off at the schema's bound of {limit} tokens: "
                f"it did not apply the {self.server.constraint} constraint ({text[:120]!r})"
            )
        return parse(schema, text)

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        text = self.render(prompt)
        # a token is at least one byte of text (and the BOS token, none): a prompt with
        # fewer bytes than the window surely fits, and the server need not be asked
        if len(text.encode("utf-8")) + 1 + reserve <= self.n_ctx:
            return True
        tokenizer = self.server.dialect.tokenize
        if tokenizer is None:
            return False  # no way to count: the conservative answer
        path, key = tokenizer
        self.counts.add()
        counted = token_count(
            self._connection.post(path, {"model": self.server.model, key: text}, root=True)
        )
        if counted is None:
            raise ServerError(f"the judge server's {path} did not say how many tokens")
        return counted + reserve <= self.n_ctx

    def _count_call(self, started: float) -> None:
        self.usage.judge_calls += 1
        self.usage.seconds += time.perf_counter() - started


def _shown(first: dict[str, float]) -> str:
    likeliest = sorted(first.items(), key=lambda item: -item[1])[:5]
    return "top: " + ", ".join(f"{token!r} {math.exp(lp):.2f}" for token, lp in likeliest)
