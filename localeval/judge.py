"""The judge: what metrics may ask of a language model, and the bookkeeping around it.

Metrics never talk to a model runtime. They build a `Prompt` and ask the judge for the
probability that the answer is Yes (`yes_probability`), for the probability of each of a
few replies (`choice_probabilities`) or for a JSON value that fits a typed schema
(`generate`). The judges themselves are backends (localeval.backends).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from localeval.schema import Schema


@dataclass(frozen=True)
class Prompt:
    """A system message and a user message, the user message in segments.

    Put what several prompts share (the contexts) in the first segments and what differs
    (the statement asked about) in the last: the judge reuses the evaluated state of a run
    of identical leading segments instead of evaluating them again. Segment boundaries are
    also where reuse may start, so the numbers a prompt gives never depend on which prompts
    came before it.

    `lasting` says how many leading segments stay the same when the answer changes (the
    contexts, the question): a judge that keeps states on disk for later runs keeps only
    theirs, since a later version of the answers never reads a state that holds one of
    this version's (None: every segment but the last). It never changes a number.
    """

    system: str
    segments: tuple[str, ...]
    #: text the reply is made to begin with (e.g. "Score: "), for reading what comes next
    reply_prefix: str = ""
    lasting: int | None = None

    def __post_init__(self) -> None:
        # a bare string here would be taken character by character
        if not isinstance(self.segments, tuple) or not all(
            isinstance(s, str) for s in self.segments
        ):
            raise TypeError("Prompt.segments must be a tuple of strings; use Prompt.of()")

    @classmethod
    def of(
        cls, system: str, *segments: str, reply_prefix: str = "", lasting: int | None = None
    ) -> Prompt:
        """A prompt whose user message is the given segments, in order (empty ones left
        out, so `lasting` counts segments that are not empty)."""
        return cls(system, tuple(s for s in segments if s), reply_prefix, lasting)

    @property
    def user(self) -> str:
        """The whole user message."""
        return "".join(self.segments)


@dataclass
class Usage:
    """What the judge did in a run; the figures that do not vary with machine load."""

    judge_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    #: requests sent again after a connection error or a server error (a server judge)
    retries: int = 0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        return data

    def __add__(self, other: Usage) -> Usage:
        """The work of two runs (or two samples) together."""
        return Usage(**{k: v + getattr(other, k) for k, v in asdict(self).items()})

    def __sub__(self, other: Usage) -> Usage:
        """What was done between two snapshots of the same counter."""
        return Usage(**{k: v - getattr(other, k) for k, v in asdict(self).items()})

    def snapshot(self) -> Usage:
        return Usage(**asdict(self))


@dataclass(frozen=True)
class JudgeSpeed:
    """How fast a judge works on one machine, measured there once (localeval.estimate.speed).

    A judge's time is its steps (llama.cpp calls, or requests to a server), the prompt
    tokens it evaluates and the tokens it generates: each step costs `step_seconds` beyond
    its tokens (llama.cpp reads all the weights once per call), and the tokens cost what
    their rates say.
    """

    prompt_tokens_per_s: float
    step_seconds: float
    generated_tokens_per_s: float
    #: loading the model before the first call (0 for a server)
    load_seconds: float = 0.0

    def seconds(self, steps: int, prompt_tokens: int, generated_tokens: int) -> float:
        """What that much work takes, loading not included."""
        return (
            steps * self.step_seconds
            + prompt_tokens / self.prompt_tokens_per_s
            + generated_tokens / self.generated_tokens_per_s
        )


@dataclass(frozen=True)
class ModelIdentity:
    """Which model gave a run's numbers, as the run and the cache record it.

    `fields` say what the model is: {"sha256": ...} for a model file; a server's judge
    says {"base_url": ..., "model": ..., "revision": ...}. `settings` are what besides
    the model changes its numbers (llama.cpp's batch size, ...). `reported` is what a
    server said about itself (its version, the file it serves): recorded with the run and
    compared by `diff`, but not part of the key, since a restarted server says it again.
    """

    name: str
    fields: Mapping[str, str]
    settings: Mapping[str, Any] = field(default_factory=dict)
    reported: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """One string for the model: its file's sha256, else a digest of its fields."""
        if "sha256" in self.fields:
            return self.fields["sha256"]
        text = json.dumps(dict(sorted(self.fields.items())), separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def record(self, with_settings: bool = True) -> dict[str, Any]:
        """What results.json's run.judge (or run.embedder) holds about the model."""
        record: dict[str, Any] = {"name": self.name, **self.fields}
        if with_settings and self.settings:
            record["settings"] = dict(self.settings)
        if self.reported:
            record["server"] = dict(self.reported)
        return record


class Judge(Protocol):
    """A language model that answers yes/no questions with a probability and fills schemas."""

    name: str
    usage: Usage

    @property
    def identity(self) -> ModelIdentity:
        """Which model this is (recorded with every run, and the key of its cache)."""
        ...

    def yes_probability(self, prompt: Prompt) -> float:
        """P(Yes) / (P(Yes) + P(No)) at the first token of the reply, in [0, 1]."""
        ...

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        """The probability of each option as the whole reply, normalised over the options.

        Options may share tokens ("1" and "10"): an option that is a prefix of another counts
        only when the reply stops there.
        """
        ...

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        """Greedy, grammar-constrained reply, decoded as JSON that matches `schema`."""
        ...

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        """Whether the prompt plus `reserve` generated tokens fit the context window."""
        ...


# -- a judge's optional abilities: tested at run time (isinstance), so runtime-checkable --


@runtime_checkable
class JudgeWithSessions(Protocol):
    """A judge that hands out sessions: a judge for one sample, with its own usage counter
    (and, for a server judge, its own connection)."""

    def session(self) -> Judge:
        """A judge for one sample, sharing this one's model."""
        ...


@runtime_checkable
class ConcurrentJudge(JudgeWithSessions, Protocol):
    """A judge that holds `concurrency` samples in flight, each through its own session;
    more than 1 makes the run score samples concurrently (engine.InFlight)."""

    concurrency: int


@runtime_checkable
class CancellableJudge(Protocol):
    """A judge whose requests in progress can be stopped (samples in flight, Ctrl-C)."""

    def cancel(self) -> None:
        """Stop every request in progress now."""
        ...


@runtime_checkable
class CountingJudge(Protocol):
    """A stand-in judge that counts its steps (llama.cpp calls, or requests to a server)
    instead of taking them: a `CountingBackend`'s counter, for an estimate."""

    steps: int


@runtime_checkable
class RestoringJudge(Protocol):
    """A judge that restores shared prompt parts from states kept on disk instead of
    evaluating them: how many it restored, and their tokens (left out of its prompt
    tokens). The llama.cpp judge and its counter (an estimate) are."""

    restored: int
    restored_tokens: int


def restored_tokens(judge: object) -> int:
    """The tokens `judge` has restored from kept states so far (0 for one that keeps none)."""
    return judge.restored_tokens if isinstance(judge, RestoringJudge) else 0


@runtime_checkable
class ClosableJudge(Protocol):
    """A judge holding something to free when done with it (a model, a vocabulary, a
    connection)."""

    def close(self) -> None:
        """Free what the judge holds."""
        ...
