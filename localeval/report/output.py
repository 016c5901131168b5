"""Writing a report file: atomically, so a crash leaves the old file or none, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from localeval.errors import UsageError


def write_text(path: Path, text: str) -> None:
    """Write `text` as UTF-8 to `path` through a temporary file in the same folder."""
    folder = path.parent if str(path.parent) else Path(".")
    tmp: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=folder, prefix=f".{path.name}.", suffix=".tmp", delete=False
        ) as handle:
            tmp = Path(handle.name)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # a temporary file is private (0600); a report is an ordinary file: honour the umask
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
