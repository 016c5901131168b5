"""A prompt as a model reads it: through its chat template, and in token segments.

Any backend that feeds a model text or tokens itself (rather than sending messages to a
server that applies the template) needs the same two things, so they live here:

* `ChatTemplate`: the model's Jinja chat template, rendered once around placeholder
  messages and kept as the text before, between and after them. Only that text may
  spell special tokens; the messages never do.
* `TokenSegments`: a prompt's token segments: the template's head with the system
  message, each user segment, and the template's tail joined to the last segment. A
  backend that keeps the evaluated state reuses leading segments a new prompt shares.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from localeval.errors import ConfigError
from localeval.judge import Prompt

# Placeholders for the messages when the chat template is rendered once.
_SYSTEM_SLOT = "\x00localeval-system\x00"
_USER_SLOT = "\x00localeval-user\x00"

#: a backend's tokenizer: (text, special tokens allowed, add the model's BOS) -> token ids
Tokenize = Callable[[str, bool, bool], list[int]]
Segment = tuple[int, ...]

#: data segments whose tokens are remembered: every prompt about a sample tokenizes the same
#: chunks again, and fitting long contexts into the window (metrics.parts.long_context) even more
SEGMENT_CACHE = 4096


@dataclass(frozen=True)
class ChatTemplate:
    """The text a chat template puts before the system message, between the two messages,
    and after the user message (the assistant turn opened)."""

    head: str
    middle: str
    tail: str

    @classmethod
    def compile(cls, source: str, owner: str) -> ChatTemplate:
        """Render `source` around placeholder messages; ConfigError naming `owner` (e.g.
        "judge 'qwen'") if it fails or does not place one system and one user message."""
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        def raise_exception(message: str) -> None:
            raise ConfigError(f"{owner}: chat template error: {message}")

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.globals["raise_exception"] = raise_exception
        rendered = env.from_string(source).render(
            messages=[
                {"role": "system", "content": _SYSTEM_SLOT},
                {"role": "user", "content": _USER_SLOT},
            ],
            add_generation_prompt=True,
            bos_token="",
            eos_token="",
        )
        return cls.split(rendered, owner)

    @classmethod
    def split(
        cls, rendered: str, owner: str, system: str = _SYSTEM_SLOT, user: str = _USER_SLOT
    ) -> ChatTemplate:
        """The template's text around the `system` and `user` messages of `rendered` (a
        system and a user message rendered through it, as a server renders them)."""
        head, _, rest = rendered.partition(system)
        middle, found, tail = rest.partition(user)
        if not found or system in tail or user in tail:
            raise ConfigError(
                f"{owner}: the chat template does not place a system and a user "
                "message once each; set chat_template in models.toml"
            )
        return cls(head, middle, tail)

    def render(self, prompt: Prompt) -> str:
        """The prompt as the model sees it, through its chat template."""
        body = prompt.system + self.middle + prompt.user
        return self.head + body + self.tail + prompt.reply_prefix


class TokenSegments:
    """Turns prompts into token segments with a backend's tokenizer.

    Text from the data is tokenized with special tokens disabled: an "<|im_end|>" inside a
    retrieved chunk is plain text, and cannot end the user's turn and start a reply.
    """

    def __init__(self, template: ChatTemplate, tokenize: Tokenize, add_bos: bool):
        self.template = template
        self._tokenize = tokenize
        self._add_bos = add_bos
        self._data: OrderedDict[str, Segment] = OrderedDict()

    def segments(self, prompt: Prompt) -> list[Segment]:
        """The template's head and system message, then each user segment, the last one
        followed by the template's tail and the reply prefix."""
        template = self.template
        first = self._tokenize(template.head, True, self._add_bos)
        first += self._tokenize(prompt.system, False, False)
        first += self._tokenize(template.middle, True, False)
        segments = [tuple(first)]
        segments += [self._data_segment(text) for text in prompt.segments]
        last = self._tokenize(template.tail, True, False)
        if prompt.reply_prefix:
            last += self._tokenize(prompt.reply_prefix, False, False)
        segments = [s for s in segments if s]
        if len(segments) > 1:
            # the template's tail goes in one batch with the prompt's last segment (the part
            # no other prompt shares): a backend call costs more than its tokens (see
            # docs/measurements/speed.md), so a separate call for ~5 tokens doubled what they cost
            segments[-1] += tuple(last)
        elif last:
            segments.append(tuple(last))
        return segments

    def count(self, prompt: Prompt) -> int:
        """How many tokens the prompt is."""
        return sum(len(s) for s in self.segments(prompt))

    def _data_segment(self, text: str) -> Segment:
        """Tokens of a user-message segment (special tokens off), from a bounded cache."""
        tokens = self._data.get(text)
        if tokens is None:
            tokens = tuple(self._tokenize(text, False, False))
            self._data[text] = tokens
            if len(self._data) > SEGMENT_CACHE:
                self._data.popitem(last=False)
        else:
            self._data.move_to_end(text)
        return tokens
