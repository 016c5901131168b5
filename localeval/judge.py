"""The judge: what metrics may ask of a language model, and the bookkeeping around it.

Metrics never talk to llama.cpp. They build a `Prompt` and ask the judge either for the
probability that the answer is Yes (`yes_probability`) or for a JSON value that fits a
typed schema (`generate`). `localeval.backends.llama_cpp.LlamaJudge` is the real implementation;
tests use a scripted fake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from localeval.schema import Schema


@dataclass(frozen=True)
class Prompt:
    """A system message and a user message, the user message in segments.

    Put what several prompts share (the contexts) in the first segments and what differs
    (the statement asked about) in the last: the judge reuses the evaluated state of a run
    of identical leading segments instead of evaluating them again. Segment boundaries are
    also where reuse may start, so the numbers a prompt gives never depend on which prompts
    came before it.
    """

    system: str
    segments: tuple[str, ...]
    #: text the reply is made to begin with (e.g. "Score: "), for reading what comes next
    reply_prefix: str = ""

    def __post_init__(self) -> None:
        # a bare string here would be taken character by character
        if not isinstance(self.segments, tuple) or not all(
            isinstance(s, str) for s in self.segments
        ):
            raise TypeError("Prompt.segments must be a tuple of strings; use Prompt.of()")

    @classmethod
    def of(cls, system: str, *segments: str, reply_prefix: str = "") -> Prompt:
        """A prompt whose user message is the given segments, in order."""
        return cls(system, tuple(s for s in segments if s), reply_prefix)

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


class Judge(Protocol):
    """A language model that answers yes/no questions with a probability and fills schemas."""

    name: str
    sha256: str
    usage: Usage

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
