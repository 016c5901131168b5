"""Splitting documents into chunks at headings and paragraphs, within a token budget.

Sizes are estimated without a model (a word, a punctuation mark or a CJK character is one
token), so the chunks, and with them the test set, do not depend on which judge writes
the questions. For Qwen's tokenizer the estimate is close for English and high for
Chinese (about 1.4 characters a token), which errs on the side of smaller chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from localeval.testset.documents import Block, Document
from localeval.text import CJK_RANGES, detect_language, split_sentences

_TOKEN = re.compile(f"[{CJK_RANGES}]|\\w+|[^\\w\\s]")

DEFAULT_CHUNK_TOKENS = 300
#: the smallest chunk a test set may ask for: a heading and a sentence or two
MIN_CHUNK_TOKENS = 32
#: a section shorter than this is joined to the next one: a heading with one line under it
#: is too little to ask a question about
MIN_SECTION_TOKENS = 24


def estimate_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class Chunk:
    """A piece of one document, with its heading as its first line."""

    index: int  # position in the corpus, from 0
    text: str
    file: str
    position: int  # the line (or PDF page) where the chunk's text starts
    unit: str  # "line" | "page"
    section: str | None
    category: str
    language: str

    def source(self) -> dict[str, str | int]:
        """Where the chunk comes from, as the test set records it."""
        place: dict[str, str | int] = {"file": self.file, self.unit: self.position}
        if self.section:
            place["section"] = self.section
        return place


@dataclass
class _Section:
    heading: Block | None  # printed as the chunk's first line
    paragraphs: list[Block]
    #: the heading the section's chunks are filed under (also when merged into the text)
    title: str | None = None

    def tokens(self) -> int:
        heading = estimate_tokens(self.heading.text) if self.heading else 0
        return heading + sum(estimate_tokens(p.text) for p in self.paragraphs)


def _sections(blocks: Sequence[Block]) -> list[_Section]:
    sections: list[_Section] = []
    for block in blocks:
        if block.kind == "heading" or not sections:
            heading = block if block.kind == "heading" else None
            sections.append(
                _Section(heading, [] if heading else [block], heading.text if heading else None)
            )
        else:
            sections[-1].paragraphs.append(block)
    return _merge_small(sections)


def _merge_small(sections: list[_Section]) -> list[_Section]:
    """Join a section too short to ask about (a title, a heading with one line under it)
    to the section after it, as text ahead of that section's heading: nothing is lost."""
    merged: list[_Section] = []
    carry: list[Block] = []
    for number, section in enumerate(sections, start=1):
        if carry:
            own = [section.heading] if section.heading else []
            section = _Section(None, carry + own + section.paragraphs, section.title)
            carry = []
        if section.tokens() < MIN_SECTION_TOKENS and number < len(sections):
            carry = ([section.heading] if section.heading else []) + section.paragraphs
            carry = [Block("text", b.text, b.position) for b in carry]
            continue
        merged.append(section)
    return merged


def _pieces(text: str, budget: int) -> Iterator[str]:
    """A paragraph cut to fit `budget`: at sentence ends, and a sentence that alone is too
    long at word (or CJK character) boundaries."""
    if estimate_tokens(text) <= budget:
        yield text
        return
    current: list[str] = []
    used = 0
    for sentence in split_sentences(text) or [text]:
        for part in _hard_split(sentence, budget):
            size = estimate_tokens(part)
            if current and used + size > budget:
                yield _join(current)
                current, used = [], 0
            current.append(part)
            used += size
    if current:
        yield _join(current)


def _hard_split(sentence: str, budget: int) -> Iterator[str]:
    if estimate_tokens(sentence) <= budget:
        yield sentence
        return
    tokens = list(re.finditer(r"\S+", sentence))
    start = 0
    count = 0
    for match in tokens:
        size = estimate_tokens(match.group())
        if count and count + size > budget:
            yield sentence[start : match.start()].strip()
            start, count = match.start(), 0
        if size > budget:  # a run without spaces (Chinese): cut by characters
            for offset in range(0, len(match.group()), budget):
                yield match.group()[offset : offset + budget]
            start, count = match.end(), 0
            continue
        count += size
    if sentence[start:].strip():
        yield sentence[start:].strip()


def _join(parts: Sequence[str]) -> str:
    text = ""
    for part in parts:
        cjk_edge = text and (detect_language(text[-1]) == "zh" or detect_language(part[0]) == "zh")
        text += part if not text or cjk_edge else " " + part
    return text


def chunk_document(document: Document, budget: int, first_index: int = 0) -> list[Chunk]:
    """The document's chunks: each within one section, at most `budget` estimated tokens
    (its heading included), filled with whole paragraphs where they fit."""
    chunks: list[Chunk] = []
    for section in _sections(document.blocks):
        heading = section.heading.text if section.heading else None
        title = section.title
        room = max(budget - (estimate_tokens(heading) if heading else 0), 16)
        body: list[str] = []
        # the section's first chunk starts at its heading, a later one at its paragraph
        start = section.heading.position if section.heading else section.paragraphs[0].position
        used = 0
        for paragraph in section.paragraphs:
            for piece in _pieces(paragraph.text, room):
                size = estimate_tokens(piece)
                if body and used + size > room:
                    chunks.append(
                        _chunk(document, heading, title, body, start, first_index + len(chunks))
                    )
                    body, used, start = [], 0, paragraph.position
                body.append(piece)
                used += size
        if body:
            chunks.append(_chunk(document, heading, title, body, start, first_index + len(chunks)))
    return chunks


def _chunk(
    document: Document, heading: str | None, title: str | None, body: list[str], start: int,
    index: int,
) -> Chunk:  # fmt: skip
    text = "\n\n".join(body)
    full = f"{heading}\n\n{text}" if heading else text
    return Chunk(
        index=index,
        text=full,
        file=document.path,
        position=start,
        unit=document.unit,
        section=title,
        category=document.category,
        language=detect_language(full),
    )


def chunk_documents(
    documents: Sequence[Document], budget: int = DEFAULT_CHUNK_TOKENS
) -> list[Chunk]:
    """Every document's chunks, numbered through the corpus."""
    chunks: list[Chunk] = []
    for document in documents:
        chunks += chunk_document(document, budget, first_index=len(chunks))
    return chunks
