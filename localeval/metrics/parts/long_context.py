"""Contexts longer than the judge's context window: the rule every metric follows.

When a sample's prompt fits the judge's window (n_ctx in models.toml), nothing here is
used. When it does not (context precision asks the embedder, which reads a long chunk
sentence by sentence, and needs no rule):

* The chunks are split, in rank order, into *windows*: runs of consecutive chunks whose
  prompt fits. A chunk too long to fit on its own is first cut into pieces that do (at a
  sentence end or a space where there is one), each piece a part of its own.
* Faithfulness and context recall judge each statement against every window and keep the
  best support: a statement counts as supported when some part of the context states it.
  (A statement that only two chunks in different windows support together is missed:
  the score can err low, never high.)
* Answer relevancy, whose prompts hold the answer but no contexts, judges the beginning
  of an answer too long to fit: as much as fits.
* A statement, question or answer too long to fit with no context at all makes the
  metric undefined for the sample, with the reason.

Whatever was done is recorded in the sample's details under "long_context".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from localeval.judge import Judge, Prompt

#: builds the prompts that must fit when the context shown is `texts`
PromptsFor = Callable[[Sequence[str]], Sequence[Prompt]]

# where a piece may end: after a sentence end, else after any whitespace
_SENTENCE_END = re.compile(r"[.!?。！？；;]\s*")
_SPACE = re.compile(r"\s+")


class NoRoomForContext(Exception):
    """Even with no context at all, the prompt does not fit the judge's window."""


@dataclass(frozen=True)
class Part:
    """A chunk, or a piece of a chunk too long to fit alone."""

    chunk: int  # 0-based index of the chunk in the sample's contexts
    text: str


@dataclass(frozen=True)
class Window:
    """Consecutive parts whose prompt fits the judge's window."""

    parts: tuple[Part, ...]

    @property
    def texts(self) -> list[str]:
        return [part.text for part in self.parts]

    def chunk_range(self) -> list[int]:
        """First and last chunk shown, 1-based as in reports."""
        return [self.parts[0].chunk + 1, self.parts[-1].chunk + 1]


def fits_all(judge: Judge, prompts: Sequence[Prompt], reserve: int) -> bool:
    return all(judge.fits(prompt, reserve) for prompt in prompts)


def split_into_windows(
    judge: Judge, contexts: Sequence[str], prompts_for: PromptsFor, reserve: int
) -> list[Window]:
    """The chunks in rank order, packed greedily into windows whose prompts all fit.

    Raises NoRoomForContext when not even an empty context leaves room for the prompt.
    """
    if not fits_all(judge, prompts_for([""]), reserve):
        raise NoRoomForContext
    parts: list[Part] = []
    for index, chunk in enumerate(contexts):
        parts += [Part(index, piece) for piece in _pieces(judge, chunk, prompts_for, reserve)]
    windows: list[Window] = []
    start = 0
    while start < len(parts):
        # fitting is monotone in the number of parts shown: binary search for the most
        low, high = 1, len(parts) - start  # one part always fits: pieces were cut to
        while low < high:
            middle = (low + high + 1) // 2
            shown = [p.text for p in parts[start : start + middle]]
            if fits_all(judge, prompts_for(shown), reserve):
                low = middle
            else:
                high = middle - 1
        windows.append(Window(tuple(parts[start : start + low])))
        start += low
    return windows


def _pieces(judge: Judge, chunk: str, prompts_for: PromptsFor, reserve: int) -> list[str]:
    """`chunk` whole if it fits alone, else cut into consecutive pieces that each fit."""
    pieces: list[str] = []
    rest = chunk
    while rest:
        if fits_all(judge, prompts_for([rest]), reserve):
            pieces.append(rest)
            break
        length = longest_fitting_prefix(
            rest, lambda text: fits_all(judge, prompts_for([text]), reserve)
        )
        if length == 0:
            raise NoRoomForContext
        cut = natural_cut(rest, length)
        pieces.append(rest[:cut])
        rest = rest[cut:].lstrip()
    return pieces or [chunk]


def longest_fitting_prefix(text: str, fits: Callable[[str], bool]) -> int:
    """The length of the longest prefix of `text` for which `fits` holds (0 if none)."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if fits(text[:middle]):
            low = middle
        else:
            high = middle - 1
    return low


def natural_cut(text: str, limit: int) -> int:
    """Where to cut `text` at or before `limit`: after the last sentence end, else after
    the last whitespace, in the second half of the limit; else at the limit itself."""
    for pattern in (_SENTENCE_END, _SPACE):
        ends = [m.end() for m in pattern.finditer(text, limit // 2, limit) if m.end() <= limit]
        if ends:
            return ends[-1]
    return limit


def describe(windows: Sequence[Window], n_chunks: int, rule: str) -> dict[str, object]:
    """What `long_context` in a sample's details says about a split into windows."""
    parts_per_chunk: dict[int, int] = {}
    for window in windows:
        for part in window.parts:
            parts_per_chunk[part.chunk] = parts_per_chunk.get(part.chunk, 0) + 1
    return {
        "rule": rule,
        "windows": [window.chunk_range() for window in windows],
        "chunks": n_chunks,
        "chunks_cut_into_pieces": sorted(c + 1 for c, n in parts_per_chunk.items() if n > 1),
    }


def fit_text(judge: Judge, text: str, prompt_with: Callable[[str], Prompt], reserve: int) -> str:
    """`text` itself if its prompt fits, else its longest beginning that does.

    Raises NoRoomForContext when even an empty text does not fit.
    """
    if judge.fits(prompt_with(text), reserve):
        return text
    length = longest_fitting_prefix(text, lambda t: judge.fits(prompt_with(t), reserve))
    if length == 0:
        raise NoRoomForContext
    return text[: natural_cut(text, length)].rstrip()
