"""Writing an output file (`--output`) without ever destroying what the path is.

`output_target` says, before any work, what writing a path would do, and refuses what
would destroy something: a regular file is replaced atomically (a crash or a full disk
leaves the old file or none, never half of one) and keeps its permissions, through a
symlink its target, so the link stays; a character device or a FIFO (`/dev/stdout`,
`/dev/null`, a pipe) is written to as a stream, never replaced; anything else (a folder, a
socket, a block device, a symlink to nothing) is refused, as is a path that is the same
file as one of the command's inputs (its data, the run database and its journals).
`open_output` then writes it.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from localeval.data.file_rows import format_suffix
from localeval.errors import UsageError, param

#: what `kind` an output target is: a file to create, a regular file to replace, a stream
NEW, REPLACE, STREAM = "new", "replace", "stream"


@dataclass(frozen=True)
class OutputTarget:
    """What writing `path` does: create or replace `file` (the path itself, or a symlink's
    target), or stream into it; `fd` when the stream is this process's own stdout/stderr."""

    path: Path
    kind: str
    file: Path
    fd: int | None = None

    @property
    def replaces(self) -> bool:
        """Whether an existing file's content will be replaced."""
        return self.kind == REPLACE


#: (path, what it is to the command) of the files an output must not be
Protected = Sequence[tuple[Path, str]]


def output_target(
    path: Path, protected: Protected = (), option: str = param("output")
) -> OutputTarget:
    """What writing `path` would do, checked before any work; UsageError (exit 2) when it
    would destroy something or cannot be done."""
    where = f"{option} {path}"
    try:
        info = path.stat()  # follows symlinks: the target decides
    except FileNotFoundError:
        if path.is_symlink():
            raise UsageError(
                f"{where}: is a symlink to {os.readlink(path)}, which does not exist"
            ) from None
        _check_folder(path, where)
        target = OutputTarget(path, NEW, path)
    except NotADirectoryError:
        raise UsageError(f"{where}: {path.parent} is not a folder") from None
    except OSError as exc:
        raise UsageError(f"{where}: {exc.strerror or exc}") from None
    else:
        target = _existing(path, info, where)
    for other, what in protected:
        if _same_file(target.file, other):
            raise UsageError(
                f"{where}: is the same file as {what}, {other}; refusing to overwrite it"
            )
    return target


def _existing(path: Path, info: os.stat_result, where: str) -> OutputTarget:
    own = _own_stream(info)
    if own is not None:
        return OutputTarget(path, STREAM, path, own)
    if stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode):
        return OutputTarget(path, STREAM, path)
    if stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{where}: is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(
            f"{where}: is neither a regular file nor a character device or FIFO; refusing to "
            "write there"
        )
    file = Path(os.path.realpath(path))  # through a symlink: its target is replaced, not it
    _check_folder(file, where)
    return OutputTarget(path, REPLACE, file)


def _own_stream(info: os.stat_result) -> int | None:
    """1 or 2 when the path is this process's stdout or stderr (`/dev/stdout` when it is
    redirected to a file, say): written through that descriptor, after what was printed."""
    for fd in (1, 2):
        try:
            mine = os.fstat(fd)
        except OSError:
            continue
        if (mine.st_dev, mine.st_ino) == (info.st_dev, info.st_ino):
            return fd
    return None


def _check_folder(file: Path, where: str) -> None:
    folder = file.parent if str(file.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{where}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{where}: folder {folder} is not writable")


def _same_file(a: Path, b: Path) -> bool:
    """The same file: by inode when both exist (hard links too), else by the resolved path
    (a database journal that does not exist yet)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


@contextmanager
def open_output(target: OutputTarget | Path) -> Iterator[TextIO]:
    """A UTF-8 text handle for an output: a stream is written in place; a file is written to
    a temporary file in the same folder, synced, then renamed over it when the block ends
    without error. Raises UsageError (naming the file) when it cannot be written."""
    if isinstance(target, Path):
        target = output_target(target)
    if target.kind == STREAM:
        with _stream(target) as handle:
            yield handle
        return
    with _atomic(target.file, target.path) as handle:
        yield handle


@contextmanager
def _stream(target: OutputTarget) -> Iterator[TextIO]:
    try:
        if target.fd is not None:
            # what this process printed there comes first; a duplicate shares the offset
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            handle = os.fdopen(os.dup(target.fd), "w", encoding="utf-8")
        else:
            handle = target.path.open("w", encoding="utf-8")
        with handle:
            yield handle
    except OSError as exc:
        raise UsageError(f"cannot write {target.path}: {exc.strerror or exc}") from None


@contextmanager
def _atomic(file: Path, named: Path) -> Iterator[TextIO]:
    folder = file.parent if str(file.parent) else Path(".")
    tmp: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "wb", dir=folder, prefix=f".{file.name}.", suffix=".tmp", delete=False
        ) as raw:
            tmp = Path(raw.name)
            with _text_writer(raw, compressed=format_suffix(file)[1]) as handle:
                yield handle
            raw.flush()
            os.fsync(raw.fileno())
        tmp.chmod(_mode_for(file))
        os.replace(tmp, file)
    except OSError as exc:
        raise UsageError(f"cannot write {named}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()


@contextmanager
def _text_writer(raw: BinaryIO, compressed: bool) -> Iterator[TextIO]:
    """UTF-8 text over `raw`, gzip-compressed (without a time stamp, so that the same text
    gives the same bytes, nor the temporary file's name) when the output's name ends in
    .gz; `raw` is left open."""
    binary: Any = gzip.GzipFile("", "wb", fileobj=raw, mtime=0) if compressed else raw
    text = io.TextIOWrapper(binary, encoding="utf-8")
    yield text
    text.flush()
    text.detach()
    if compressed:
        binary.close()  # writes the gzip trailer; a GzipFile never closes its fileobj


def _mode_for(file: Path) -> int:
    """The permissions of the file written: those of the file it replaces (a private file
    stays private: results hold the data's text), or for a new one an ordinary file's under
    the umask, as open() would give it (a temporary file is private, 0600)."""
    try:
        return stat.S_IMODE(file.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text(target: OutputTarget | Path, text: str) -> None:
    """Write `text` as UTF-8 to an output (see open_output)."""
    with open_output(target) as handle:
        handle.write(text)


#: the name the package used before outputs could be streams
atomic_text_file = open_output
