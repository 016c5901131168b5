"""DATA given as `-`: standard input, kept in a temporary file for the time of the command.

An evaluation reads its data twice (every row is checked before any model loads, then
scored) and hashes it to know a re-run of the same data, so a pipe is first copied to a
file. Its format is told from its first bytes: a JSON array starts with `[`, anything else
is read as JSONL; either may be gzip-compressed. (CSV cannot be told apart from text and is
not read from standard input: give it as a file.)
"""

from __future__ import annotations

import shutil
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

#: how DATA names standard input, and how messages and the run history name it
STDIN, STDIN_NAME = "-", "<stdin>"

_GZIP_MAGIC = b"\x1f\x8b"


def _suffix(start: bytes) -> str:
    """The file suffix that reads data beginning with these bytes."""
    compressed = start[:2] == _GZIP_MAGIC
    if compressed:
        try:
            start = zlib.decompressobj(wbits=31).decompress(start)
        except zlib.error:
            start = b""  # read as JSONL: the reader names the broken compression
    text = start.lstrip(b"\xef\xbb\xbf").lstrip()
    kind = ".json" if text[:1] == b"[" else ".jsonl"
    return kind + (".gz" if compressed else "")


@contextmanager
def spooled(stream: BinaryIO) -> Iterator[Path]:
    """The whole of `stream` in a temporary file (deleted afterwards) named for its format."""
    with tempfile.TemporaryDirectory(prefix="localeval-stdin-") as folder:
        raw = Path(folder) / "stdin"
        with raw.open("wb") as handle:
            shutil.copyfileobj(stream, handle, 1 << 20)
        with raw.open("rb") as handle:
            start = handle.read(1 << 16)
        path = raw.with_name("stdin" + _suffix(start))
        raw.rename(path)
        yield path
