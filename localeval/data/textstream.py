"""Reading a data file's text piece by piece, so memory does not grow with the file.

`text_chunks` decodes UTF-8 a block at a time; `text_lines` splits that into lines;
`json_array_values` decodes a JSON array one element at a time. Each reports problems as
a DatasetError naming the line (and for JSON the column) in the whole file.

For JSON arrays the end of each element is found first, by a scan of brackets and strings
only (in C, through a regular expression), so the standard decoder then reads a complete
element and describes any error in it exactly; the text before the element is dropped.
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from localeval.errors import DatasetError

CHUNK_BYTES = 1 << 20


def text_chunks(path: Path, compressed: bool = False) -> Iterator[str]:
    """The file's text in pieces (`compressed`: of the gzip file's content); a UTF-8
    byte-order mark is skipped; bad UTF-8 stops with a DatasetError naming its line and byte
    offset."""
    try:
        handle = _open(path, compressed)
    except IsADirectoryError:
        raise DatasetError(str(path), "is a directory, not a data file") from None
    except FileNotFoundError:
        raise DatasetError(str(path), "file not found") from None
    except OSError as exc:
        raise DatasetError(str(path), f"cannot be read ({exc.strerror})") from None
    with handle:
        decoder = codecs.getincrementaldecoder("utf-8")()
        offset = 0  # bytes of the file before `data`
        newlines = 0  # newline bytes before `data`
        first = True  # until the first character: a byte-order mark there is skipped
        while True:
            try:
                data = handle.read(CHUNK_BYTES)
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise DatasetError(str(path), f"is not a complete gzip file ({exc})") from None
            except OSError as exc:
                raise DatasetError(str(path), f"cannot be read ({exc.strerror})") from None
            if first and offset == 0:
                _check_not_other_encoding(path, data)
            pending = len(decoder.getstate()[0])  # bytes of a character split across reads
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                in_data = max(0, exc.start - pending)
                line = newlines + data[:in_data].count(b"\n") + 1
                raise DatasetError(
                    str(path),
                    f"is not valid UTF-8 (byte {offset + in_data}); save the file as UTF-8",
                    line,
                ) from None
            offset += len(data)
            newlines += data.count(b"\n")
            if first and text:
                first = False
                text = text.removeprefix("\ufeff")
            if text:
                yield text
            if not data:
                return


def _open(path: Path, compressed: bool) -> BinaryIO:
    if compressed:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def _check_not_other_encoding(path: Path, start: bytes) -> None:
    """Name the two encodings that are most often mistaken for UTF-8 text files."""
    if start[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise DatasetError(str(path), "is UTF-16 text; save it as UTF-8")
    if start[:2] == b"\x1f\x8b":
        raise DatasetError(str(path), "is gzip-compressed; decompress it first")


_LINE_END = re.compile(r"\r\n|\r|\n")


def text_lines(chunks: Iterator[str]) -> Iterator[str]:
    """Lines with their endings; a line ends at \\n, \\r\\n or \\r (never at other Unicode
    separators, which JSON strings and CSV cells may hold)."""
    rest = ""
    for chunk in chunks:
        text = rest + chunk if rest else chunk
        start = 0
        for match in _LINE_END.finditer(text):
            end = match.end()
            if end == len(text) and match.group() == "\r":
                break  # may be the first half of a \r\n split across chunks
            yield text[start:end]
            start = end
        rest = text[start:]
    if rest:
        yield rest


# One token of JSON as far as nesting is concerned. A string's escapes are skipped whole, so
# brackets inside strings never count; an unclosed string means more text is needed.
_TOKEN = re.compile(
    r'(?P<string>"[^"\\]*(?:\\.[^"\\]*)*")'
    r"|(?P<open>[{\[])"
    r"|(?P<close>[}\]])"
    r"|(?P<gap>[,:\s]+)"
    r'|(?P<atom>[^"{}\[\],:\s]+)'
    r'|(?P<unclosed>")',
    re.DOTALL,
)
_SPACE = re.compile(r"[ \t\r\n]*")


def _value_end(text: str, start: int) -> int | None:
    """Where the JSON value starting at `start` ends, judged by brackets and strings alone;
    None when the text ends before it does. Invalid JSON is left to the decoder to describe."""
    depth = 0
    position = start
    while position < len(text):
        match = _TOKEN.match(text, position)
        assert match is not None  # the alternatives cover every character
        kind = match.lastgroup
        position = match.end()
        if kind == "unclosed":
            return None
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
        elif depth == 0 and kind == "atom" and position == len(text):
            return None  # a number may continue in the next chunk
        if depth <= 0:
            return position
    return None


class _Window:
    """The part of the file's text read but not yet consumed, and where it starts (line,
    column) in the whole file, so positions in the window map to the file's lines."""

    def __init__(self, chunks: Iterator[str]):
        self._chunks = chunks
        self.text = ""
        self.eof = False
        # a bookmark at a position in the window, with its line and column in the file
        self._mark = 0
        self._mark_line = 1
        self._mark_column = 0  # characters before the mark on its line

    def more(self) -> bool:
        """Append the next piece of the file; False at its end."""
        if self.eof:
            return False
        chunk = next(self._chunks, None)
        if chunk is None:
            self.eof = True
            return False
        self.text += chunk
        return True

    def release(self, position: int) -> int:
        """Forget the text before `position` once it is large; returns the new position."""
        if position < CHUNK_BYTES:
            return position
        self.locate(position)
        self.text = self.text[position:]
        self._mark = 0
        return 0

    def locate(self, position: int) -> tuple[int, int]:
        """(line, 1-based column) of `position`, which must not precede an earlier one."""
        newlines = self.text.count("\n", self._mark, position)
        if newlines:
            self._mark_line += newlines
            self._mark_column = position - self.text.rfind("\n", self._mark, position) - 1
        else:
            self._mark_column += position - self._mark
        self._mark = position
        return self._mark_line, self._mark_column + 1

    def skip_space(self, position: int) -> int:
        """The first non-blank position at or after `position`, reading more as needed;
        len(text) when the file ends first."""
        while True:
            match = _SPACE.match(self.text, position)
            assert match is not None
            position = match.end()
            if position < len(self.text) or not self.more():
                return position


def json_array_values(
    path: Path,
    chunks: Iterator[str],
    decoder: json.JSONDecoder | None = None,
    bad_value: Callable[[BaseException, int], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    """(line where it starts, value) for each element of the file's top-level JSON array.

    A syntax error ends the read. An element the decoder refuses for another reason (its
    hooks raise ValueError, or it nests too deeply) is yielded as `bad_value(error, line)`
    when that is given, and the read goes on after it.
    """
    window = _Window(chunks)
    decoder = decoder or json.JSONDecoder()

    row = 0  # elements read so far: an error inside the next one names it (row + 1)

    def error(message: str, position: int) -> DatasetError:
        line, _ = window.locate(position)
        return DatasetError(str(path), message, line)

    def decode_error(exc: json.JSONDecodeError) -> DatasetError:
        line, column = window.locate(exc.pos)
        message = f"invalid JSON ({exc.msg}, column {column})"
        return DatasetError(str(path), message, line, row=row + 1)

    position = window.skip_space(0)
    if position >= len(window.text) or window.text[position] != "[":
        raise error("a .json file must hold an array of objects", position)
    position = window.skip_space(position + 1)
    if position < len(window.text) and window.text[position] == "]":
        return
    while True:
        position = window.release(position)
        while _value_end(window.text, position) is None and window.more():
            pass
        try:
            value, end = decoder.raw_decode(window.text, position)
        except json.JSONDecodeError as exc:
            raise decode_error(exc) from None
        except (ValueError, RecursionError) as exc:
            line, _ = window.locate(position)
            value_end = _value_end(window.text, position)
            if bad_value is None or value_end is None:
                raise DatasetError(str(path), f"invalid JSON ({exc})", line, row=row + 1) from None
            value, end = bad_value(exc, line), value_end
        line, _ = window.locate(position)
        row += 1
        yield line, value
        position = window.skip_space(end)
        if position < len(window.text) and window.text[position] == ",":
            comma = position
            position = window.skip_space(position + 1)
            if position < len(window.text) and window.text[position] == "]":
                raise error("invalid JSON (a comma after the last row)", comma)
            continue
        if position < len(window.text) and window.text[position] == "]":
            return
        raise error("invalid JSON (expected ',' or ']' after a row)", position)
