"""Writing JSONL outputs atomically, and refusing to write over an input."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from localeval.errors import UsageError


def check_not_input(output: Path, inputs: Sequence[Path], what: str = "an input file") -> None:
    """UsageError when `output` is one of `inputs` (the same file by any path)."""
    target = output.resolve()
    for path in inputs:
        if path.resolve() == target:
            raise UsageError(f"--output {output} is {what}; write the output to another file")


def check_output_folder(output: Path) -> None:
    folder = output.parent if str(output.parent) else Path(".")
    if output.is_dir():
        raise UsageError(f"--output {output} is a folder; name a file")
    if not folder.is_dir():
        raise UsageError(f"--output {output}: the folder {folder} does not exist")


def json_line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(", ", ": ")) + "\n"


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows as JSONL: to a temporary file beside `path`, synced, then renamed over it,
    so a crash leaves the old file or the new one, never half of one."""
    folder = path.parent if str(path.parent) else Path(".")
    tmp: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=folder, prefix=f".{path.name}.", suffix=".tmp", delete=False
        ) as handle:
            tmp = Path(handle.name)
            for row in rows:
                handle.write(json_line(row))
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o666 & ~umask)  # an ordinary file, not the temporary file's 0600
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()
