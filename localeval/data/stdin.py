"""DATA given as `-` (standard input) or as a pipe (a FIFO, `<(command)`, a character
device), kept in a temporary file for the time of the command.

An evaluation reads its data more than once (every row is checked before any model loads,
then scored) and hashes it to know a re-run of the same data, so a pipe is first copied to
a file: read twice, it would wait forever for a second writer. The format of standard input
is told from its first bytes: a JSON array starts with `[`, anything else is read as JSONL;
either may be gzip-compressed. (CSV cannot be told apart from text and is not read from
standard input: give it as a file.) A named pipe's format is its name's, as a file's is,
and told from its first bytes when its name has no suffix (`/dev/fd/63`).
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from localeval.errors import DatasetError
from localeval.text import printable

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
def spooled(stream: BinaryIO, name: str | None = None) -> Iterator[Path]:
    """The whole of `stream` in a temporary file (deleted afterwards) named for its format:
    the suffixes of `name` when it has one, else what its first bytes are."""
    with tempfile.TemporaryDirectory(prefix="localeval-stdin-") as folder:
        raw = Path(folder) / "stdin"
        with raw.open("wb") as handle:
            shutil.copyfileobj(stream, handle, 1 << 20)
        with raw.open("rb") as handle:
            start = handle.read(1 << 16)
        named = Path(name or "")
        path = raw.with_name(
            "stdin" + ("".join(named.suffixes) if named.suffix else _suffix(start))
        )
        raw.rename(path)
        yield path


def is_pipe(path: Path) -> bool:
    """Whether `path` is a FIFO or a character device, whose content is read only once."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # the reader says what is wrong with it
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


@contextmanager
def readable_data(data: Path, stdin: BinaryIO) -> Iterator[tuple[Path, str | None]]:
    """DATA as a file that can be read more than once, with the name messages and the run
    history give it (None: its own path): standard input (`-`) and a pipe are copied to a
    temporary file first; a file is itself."""
    if str(data) == STDIN:
        with spooled(stdin) as path:
            yield path, STDIN_NAME
        return
    if not is_pipe(data):
        yield data, None
        return
    label = printable(str(data))
    try:
        stream = data.open("rb")
    except OSError as exc:
        raise DatasetError(label, f"cannot be read ({exc.strerror or exc})") from None
    with stream, spooled(stream, data.name) as path:
        yield path, label
