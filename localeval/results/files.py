"""Writing an output file atomically: a crash or a full disk leaves the old file or none,
never half of one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from localeval.errors import UsageError


@contextmanager
def atomic_text_file(path: Path) -> Iterator[TextIO]:
    """A UTF-8 text handle whose content replaces `path` when the block ends without error.

    The text goes to a temporary file in the same folder, synced, then renamed over `path`.
    Raises UsageError (naming the file) when it cannot be written.
    """
    folder = path.parent if str(path.parent) else Path(".")
    tmp: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=folder, prefix=f".{path.name}.", suffix=".tmp", delete=False
        ) as handle:
            tmp = Path(handle.name)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        # a temporary file is private (0600); an output file is an ordinary one: honour the
        # umask, as open() would
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()


def write_text(path: Path, text: str) -> None:
    """Write `text` as UTF-8 to `path`, atomically."""
    with atomic_text_file(path) as handle:
        handle.write(text)
