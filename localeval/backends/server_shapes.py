"""What each kind of judge server accepts and returns: request fields, and readers of replies.

The servers all speak OpenAI's `/v1/completions`, but differ in how a reply is
constrained, where the token probabilities are, and what they say about themselves. Each
kind is a `Dialect`; docs/servers.md tables what was verified against a running server
and what comes from documentation only. The readers accept every reply shape seen or
documented, so one judge serves them all; a reply none of them can read is an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from localeval.backends.server_http import ServerError
from localeval.schema import Schema, to_gbnf, to_json_schema

#: how many of the likeliest first tokens a verdict reads (OpenAI's and vLLM's maximum)
TOP_LOGPROBS = 20

#: ways a server constrains a structured reply to the schema
CONSTRAINTS = ("grammar", "structured_outputs", "guided_json", "response_format")


@dataclass(frozen=True)
class Dialect:
    """One kind of server: how to constrain a reply, how to count tokens, what to ask it
    about itself."""

    name: str
    constraint: str
    #: fields sent with every completion (samplers that would change a greedy reply)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    #: fields sent when only the first token's probabilities are read
    read: Mapping[str, Any] = field(default_factory=dict)
    #: (path at the server's root, field holding the text) of its tokenizer, if it has one
    tokenize: tuple[str, str] | None = None
    #: paths at the server's root whose replies say what it is (version, model file)
    about: tuple[str, ...] = ()


#: llama.cpp applies its repeat penalty (llama-cpp-python's server: 1.1 by default) before
#: the greedy choice, so a greedy reply depends on it unless it is turned off
_LLAMA_CPP_SAMPLING = {"repeat_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0}

#: a reply read for its first token must not end before it: llama-cpp-python gives no
#: probabilities at all when the end-of-reply token is the likeliest (verified), so the
#: end is kept from being chosen (not from the probabilities, which are the raw ones)
_NOT_ENDING = {"min_tokens": 1}

DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        # verified: tests/test_server_real.py runs llama-cpp-python's own server
        Dialect(
            "llama-cpp-python",
            "grammar",
            fixed=_LLAMA_CPP_SAMPLING,
            read=_NOT_ENDING,
            tokenize=("/extras/tokenize", "input"),
        ),
        # verified: tests/test_llama_server_real.py runs llama.cpp's llama-server (built
        # from the llama.cpp llama-cpp-python vendors). Its `logprobs` on /v1/completions is
        # an alias of its own `n_probs`, which older versions read alone; it gives the first
        # token's probabilities even when that token ends the reply (no min_tokens needed)
        Dialect(
            "llama-server",
            "grammar",
            fixed={**_LLAMA_CPP_SAMPLING, "cache_prompt": True},
            read={"n_probs": TOP_LOGPROBS},
            tokenize=("/tokenize", "content"),
            about=("/props",),
        ),
        # vLLM: from its documentation, tested against a recorded fake
        Dialect(
            "vllm",
            "structured_outputs",
            read=_NOT_ENDING,
            tokenize=("/tokenize", "prompt"),
            about=("/version",),
        ),
        # Ollama's OpenAI-compatible API: from its documentation only
        Dialect("ollama", "response_format", about=("/api/version",)),
        # any other server of OpenAI's completions API
        Dialect("openai", "response_format"),
    )
}

#: `owned_by` in /v1/models, as each server fills it in, to tell them apart
OWNERS = {"me": "llama-cpp-python", "llamacpp": "llama-server", "vllm": "vllm", "library": "ollama"}


def detect(entry: Mapping[str, Any]) -> str:
    """The kind of server that lists a model so (see OWNERS); "openai" if unknown."""
    return OWNERS.get(str(entry.get("owned_by", "")), "openai")


def constraint_fields(constraint: str, schema: Schema) -> dict[str, Any]:
    """The request fields that make the server's reply fit `schema`."""
    if constraint == "grammar":
        return {"grammar": to_gbnf(schema)}
    json_schema = to_json_schema(schema)
    if constraint == "structured_outputs":
        return {"structured_outputs": {"json": json_schema, "disable_any_whitespace": True}}
    if constraint == "guided_json":
        return {"guided_json": json_schema, "guided_whitespace_pattern": ""}
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": json_schema, "strict": True},
        }
    }


def _choice(reply: Any) -> Mapping[str, Any]:
    try:
        choice = reply["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise ServerError(f"judge server reply has no choices: {str(reply)[:200]!r}") from None
    if not isinstance(choice, Mapping):
        raise ServerError(f"judge server reply has no choices: {str(reply)[:200]!r}")
    return choice


def reply_text(reply: Any) -> tuple[str, str | None]:
    """The reply's text and finish reason (completions' `text`, or a chat `message`)."""
    choice = _choice(reply)
    text = choice.get("text")
    if text is None and isinstance(choice.get("message"), Mapping):
        text = choice["message"].get("content")
    if not isinstance(text, str):
        raise ServerError(f"judge server reply has no text: {str(choice)[:200]!r}")
    reason = choice.get("finish_reason")
    return text, reason if isinstance(reason, str) else None


def first_token_logprobs(reply: Any) -> dict[str, float]:
    """The log-probabilities of the likeliest first reply tokens, by token text.

    Three shapes: OpenAI's completions (`logprobs.top_logprobs[0]`, {token: logprob}), its
    chat completions (`logprobs.content[0].top_logprobs`, [{token, logprob}], which newer
    llama-servers use for completions too) and llama-server's own `completion_probabilities`
    (`top_logprobs`, or `probs` with probabilities). Tokens that spell the same text
    are added together.
    """
    choice = _choice(reply)
    logprobs = choice.get("logprobs")
    found: list[tuple[Any, Any]] = []
    try:
        if isinstance(logprobs, Mapping) and logprobs.get("top_logprobs"):
            found = list(logprobs["top_logprobs"][0].items())
        elif isinstance(logprobs, Mapping) and logprobs.get("content"):
            top = logprobs["content"][0]["top_logprobs"]
            found = [(_token_text(t), t["logprob"]) for t in top]
        elif isinstance(reply, Mapping) and reply.get("completion_probabilities"):
            first = reply["completion_probabilities"][0]
            if "top_logprobs" in first:
                found = [(t["token"], t["logprob"]) for t in first["top_logprobs"]]
            else:
                found = [(t["tok_str"], _log(t["prob"])) for t in first["probs"]]
    except (KeyError, IndexError, TypeError, AttributeError):
        found = []
    merged: dict[str, float] = {}
    for token, logprob in found:
        if not isinstance(token, str) or not isinstance(logprob, int | float):
            continue
        if not math.isfinite(logprob) and logprob != -math.inf:
            continue  # NaN, or +inf: not a probability
        before = merged.get(token)
        merged[token] = logprob if before is None else _logaddexp(before, logprob)
    if not merged:
        ended = " (it ended the reply before a first token)" if choice.get("text") == "" else ""
        raise ServerError(
            f"judge server returned no token probabilities (logprobs) for the reply{ended}: "
            f"{str(choice)[:200]!r}. The verdicts need them; see docs/servers.md"
        )
    return merged


def _token_text(entry: Mapping[str, Any]) -> Any:
    """A listed token's text. llama-server cuts `token` short where it ends inside a UTF-8
    character ("是" of a token whose bytes go on into the next character) and gives the whole
    token in `bytes`: those decide, so that only a token that is exactly a word counts as it
    (as in-process, which compares token ids)."""
    raw = entry.get("bytes")
    if isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        return bytes(raw).decode("utf-8", errors="replace")
    return entry["token"]


def _log(probability: Any) -> float:
    return math.log(probability) if probability > 0 else -math.inf


def _logaddexp(a: float, b: float) -> float:
    high = max(a, b)
    if high == -math.inf:
        return high
    return high + math.log(math.exp(a - high) + math.exp(b - high))


def logsumexp(values: list[float]) -> float:
    total = -math.inf
    for value in values:
        total = _logaddexp(total, value)
    return total


def prompt_tokens(reply: Any) -> tuple[int, int]:
    """(prompt tokens, generated tokens) the server says the request took; 0 if unsaid."""
    usage = reply.get("usage") if isinstance(reply, Mapping) else None
    if not isinstance(usage, Mapping):
        return 0, 0
    prompt, generated = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (
        prompt if isinstance(prompt, int) else 0,
        generated if isinstance(generated, int) else 0,
    )


def token_count(reply: Any) -> int | None:
    """How many tokens a tokenizer endpoint counted (`count` or a `tokens` list)."""
    if isinstance(reply, Mapping):
        if isinstance(reply.get("count"), int):
            return int(reply["count"])
        if isinstance(reply.get("tokens"), list):
            return len(reply["tokens"])
    return None


#: keys of a /v1/models entry or a self-report that change between two identical servers
_VOLATILE = frozenset(
    {
        "created",
        "object",
        "permission",
        "permissions",
        "modified_at",
        # llama-server's /props: a marker drawn at random each start, and whether it sleeps
        "media_marker",
        "is_sleeping",
    }
)
#: the largest self-report value kept (llama-server's /props carries its whole template)
_KEPT_CHARS = 300


def about(reply: Any) -> dict[str, Any]:
    """The stable, short scalar facts of a self-report, for the run's record."""
    if not isinstance(reply, Mapping):
        return {}
    kept: dict[str, Any] = {}
    for key, value in sorted(reply.items()):
        if key in _VOLATILE:
            continue
        if isinstance(value, str | int | float | bool) and len(str(value)) <= _KEPT_CHARS:
            kept[key] = value
        elif isinstance(value, Mapping) and key == "default_generation_settings":
            n_ctx = value.get("n_ctx")
            if isinstance(n_ctx, int):
                kept["n_ctx"] = n_ctx
    return kept
