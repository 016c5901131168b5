"""Reading documents (.txt, .md, .html, .pdf) into headings and paragraphs.

A document that cannot be read as text (empty, binary, not UTF-8, a broken PDF) is skipped
with a `Skipped` note naming the file and why: one bad file in a folder of hundreds must
not stop a run, nor end it in a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from localeval.errors import UsageError

TEXT_SUFFIXES = (".txt", ".text")
MARKDOWN_SUFFIXES = (".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIXES = (".pdf",)
SUFFIXES = TEXT_SUFFIXES + MARKDOWN_SUFFIXES + HTML_SUFFIXES + PDF_SUFFIXES

#: files larger than this are not documents a person wrote but exports or dumps
MAX_BYTES = 20 * 1024 * 1024
#: share of control characters above which "text" is really binary data
_MAX_CONTROL_SHARE = 0.01
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Block:
    """A heading or a paragraph, with where it starts (a line, or a page for a PDF)."""

    kind: str  # "heading" | "text"
    text: str
    position: int


@dataclass(frozen=True)
class Document:
    """A readable document: its name as shown, its category, and its blocks in order."""

    path: str
    category: str
    blocks: tuple[Block, ...]
    #: what `position` counts: "line" for text formats, "page" for PDF
    unit: str = "line"


@dataclass(frozen=True)
class Skipped:
    """A document left out, and why."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"skipped {self.path}: {self.reason}"


@dataclass(frozen=True)
class Found:
    """A file to read, with the category its place in the input gives it."""

    path: Path
    category: str


def _shown(path: Path) -> str:
    """A path as the user would write it: relative to the working folder when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def find_documents(inputs: Sequence[Path]) -> tuple[list[Found], list[Skipped]]:
    """The document files under `inputs` (folders recursively, hidden ones left out), in a
    stable order, each with its category: its folder below the input folder, or the input
    folder's own name for files directly in it. A named file of an unknown type is skipped."""
    found: dict[Path, Found] = {}
    skipped: list[Skipped] = []
    for given in inputs:
        if not given.exists():
            raise UsageError(f"{given}: no such file or folder")
        if given.is_file():
            if given.suffix.lower() in SUFFIXES:
                found.setdefault(given.resolve(), Found(given, given.resolve().parent.name))
            else:
                skipped.append(Skipped(_shown(given), f"unknown file type '{given.suffix}'"))
            continue
        root_name = given.resolve().name
        for path in _walk(given):
            folder = path.parent.relative_to(given).as_posix()
            category = root_name if folder == "." else folder
            found.setdefault(path.resolve(), Found(path, category))
    return list(found.values()), skipped


def _walk(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(part.startswith(".") for part in parts):
            continue
        if path.is_file() and path.suffix.lower() in SUFFIXES:
            yield path


def read_documents(found: Iterable[Found]) -> tuple[list[Document], list[Skipped]]:
    """Every readable document, and a note for each one skipped."""
    documents: list[Document] = []
    skipped: list[Skipped] = []
    for item in found:
        result = read_document(item)
        (documents if isinstance(result, Document) else skipped).append(result)  # type: ignore[arg-type]
    return documents, skipped


def read_document(item: Found) -> Document | Skipped:
    """One document's blocks, or why it was skipped."""
    shown = _shown(item.path)
    try:
        data = item.path.read_bytes()
    except OSError as exc:
        return Skipped(shown, f"cannot be read ({exc.strerror or exc})")
    if len(data) > MAX_BYTES:
        return Skipped(shown, f"larger than {MAX_BYTES // (1024 * 1024)} MB")
    suffix = item.path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        return _pdf_document(shown, item.category, data)
    text = decode_text(data)
    if isinstance(text, NotText):
        return Skipped(shown, str(text))
    if suffix in HTML_SUFFIXES:
        blocks = html_blocks(text)
    elif suffix in MARKDOWN_SUFFIXES:
        blocks = markdown_blocks(text)
    else:
        blocks = text_blocks(text)
    if not any(b.kind == "text" for b in blocks):
        return Skipped(shown, "empty (no text)")
    return Document(shown, item.category, tuple(blocks))


class NotText(str):
    """Why bytes are not text (a str, so it reads as the reason)."""


def decode_text(data: bytes) -> str | NotText:
    """UTF-8 text (a byte-order mark dropped; UTF-16 with its mark accepted), or why not."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return _checked(data.decode("utf-16"))
        except UnicodeDecodeError:
            return NotText("not valid UTF-16 text")
    if b"\x00" in data[:8192]:
        return NotText("binary data, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return NotText(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); convert it, "
            "e.g. iconv -f GB18030 -t UTF-8"
        )
    return _checked(text)


def _checked(text: str) -> str | NotText:
    if not text.strip():
        return NotText("empty (no text)")
    if len(_CONTROL.findall(text)) > _MAX_CONTROL_SHARE * len(text):
        return NotText("binary data, not text")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def text_blocks(text: str) -> list[Block]:
    """Plain text: paragraphs are runs of lines between blank lines (no headings known)."""
    blocks: list[Block] = []
    lines: list[str] = []
    start = 0
    for number, line in enumerate([*text.split("\n"), ""], start=1):
        if line.strip():
            if not lines:
                start = number
            lines.append(line.rstrip())
        elif lines:
            blocks.append(Block("text", "\n".join(lines).strip(), start))
            lines = []
    return blocks


_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def markdown_blocks(text: str) -> list[Block]:
    """Markdown: ATX (# Title) and setext (Title / ====) headings, paragraphs between blank
    lines; fenced code stays one paragraph; YAML front matter is left out."""
    lines = text.split("\n")
    if lines and lines[0].strip() == "---" and "---" in (s.strip() for s in lines[1:]):
        end = next(i for i, s in enumerate(lines[1:], start=1) if s.strip() == "---")
        lines = [""] * (end + 1) + lines[end + 1 :]  # keep the line numbers
    blocks: list[Block] = []
    para: list[str] = []
    start = 0
    fenced = False

    def flush() -> None:
        if para and "\n".join(para).strip():
            blocks.append(Block("text", "\n".join(para).strip(), start))
        para.clear()

    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and (heading := _ATX.match(line)):
            flush()
            if heading.group(2):
                blocks.append(Block("heading", heading.group(2), number))
        elif not fenced and _SETEXT.match(line) and len(para) == 1:
            blocks.append(Block("heading", para[0].strip(), start))
            para.clear()
        elif not fenced and not line.strip():
            flush()
        else:
            if not para:
                start = number
            para.append(line.rstrip())
    flush()
    return blocks


_HTML_SKIP = {"script", "style", "noscript", "template", "svg", "head", "nav"}
_HTML_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_HTML_BLOCKS = {
    "p", "li", "ul", "ol", "dl", "dt", "dd", "div", "section", "article", "main", "aside",
    "header", "footer", "table", "tr", "td", "th", "pre", "blockquote", "figure",
    "figcaption", "caption", "body", "hr", "title",
}  # fmt: skip


class _HtmlReader(HTMLParser):
    """Text of an HTML page in blocks: a heading tag gives a heading, every other block-level
    tag ends the paragraph before it; scripts, styles and navigation are left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self._parts: list[str] = []
        self._start = 0
        self._skip = 0
        self._heading = False
        self._pre = 0

    def _flush(self) -> None:
        raw = "".join(self._parts)
        text = raw.strip() if self._pre else re.sub(r"[ \t\r\f\v]*\n[ \t\r\f\v]*", "\n", raw)
        text = re.sub(r"[ \t]+", " ", text).strip()
        if text:
            self.blocks.append(Block("heading" if self._heading else "text", text, self._start))
        self._parts = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HTML_SKIP:
            self._skip += 1
        elif tag in _HTML_HEADINGS or tag in _HTML_BLOCKS:
            self._flush()
            self._heading = tag in _HTML_HEADINGS
            self._pre += tag == "pre"
        elif tag == "br":
            self._parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HTML_SKIP:
            self._skip = max(self._skip - 1, 0)
        elif tag in _HTML_HEADINGS or tag in _HTML_BLOCKS:
            self._flush()
            self._heading = False
            self._pre = max(self._pre - (tag == "pre"), 0)

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if not "".join(self._parts).strip():
            self._start = self.getpos()[0] + (len(data) - len(data.lstrip("\n")))
        self._parts.append(data if self._pre else re.sub(r"\s+", " ", data))


def html_blocks(text: str) -> list[Block]:
    reader = _HtmlReader()
    reader.feed(text)
    reader.close()
    reader._flush()
    return reader.blocks


def _pdf_document(shown: str, category: str, data: bytes) -> Document | Skipped:
    """A PDF's text layer, page by page (pypdf: pure Python, reads no network, runs no code
    from the file). Scanned pages without text are empty: they would need OCR."""
    try:
        import io

        from pypdf import PdfReader
    except ImportError:
        return Skipped(shown, "reading PDF needs the pypdf package (pip install pypdf)")
    import logging

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings would garble progress
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            return Skipped(shown, "an encrypted PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # pypdf raises many types on broken files
        return Skipped(shown, f"not a readable PDF ({type(exc).__name__}: {exc})")
    blocks = [
        Block("text", paragraph, number)
        for number, page in enumerate(pages, start=1)
        for paragraph in _pdf_paragraphs(page)
    ]
    if not blocks:
        return Skipped(shown, "empty (no text layer in the PDF; scanned pages need OCR)")
    return Document(shown, category, tuple(blocks), unit="page")


def _pdf_paragraphs(page: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", page) if p.strip()]
