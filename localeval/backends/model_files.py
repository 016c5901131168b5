"""Checks on model files before any library loads them: present, complete, right format,
right sha256.

A GGUF file is checked in three steps, cheapest first: its magic number and version; that
the file is as long as its header says (a truncated download is refused in milliseconds
even when models.toml pins no sha256, see localeval.backends.gguf_header); then its sha256.

Hashing a 500 MB GGUF takes about a second, so a file's hash is remembered in a small JSON
file beside it, keyed by size and modification time, and recomputed only when either changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from localeval.backends.gguf_header import GGUF_MAGIC, SUPPORTED_VERSIONS, truncation_problem
from localeval.errors import ModelFileError

_HASH_MEMO = ".localeval-sha256.json"


def user_cache_folder() -> Path | None:
    """This user's localeval cache folder: $XDG_CACHE_HOME/localeval, else
    ~/.cache/localeval (None: no home folder to keep anything in)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative: to be ignored, says the XDG spec
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:
            return None
    return Path(base) / "localeval"


def sha256_file(path: Path, chunk_size: int = 1 << 20) -> str:
    """The sha256 of a file's bytes, as lowercase hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def cached_sha256(path: Path) -> str:
    """sha256 of `path`, reusing the value remembered for the same size and mtime."""
    stat = path.stat()
    key = f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}"
    memo_path = path.parent / _HASH_MEMO
    memo: dict[str, str] = {}
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    if isinstance(memo, dict) and isinstance(memo.get(key), str):
        return memo[key]
    value = sha256_file(path)
    memo = {k: v for k, v in memo.items() if not k.startswith(f"{path.name}:")}
    memo[key] = value
    try:
        tmp = memo_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(memo, indent=1), encoding="utf-8")
        os.replace(tmp, memo_path)
    except OSError:
        pass  # a read-only models folder only costs us the re-hash next time
    return value


@dataclass(frozen=True)
class FileCheck:
    """What `check_gguf` / `check_embedder_dir` found; `problem` is None when the file is usable."""

    path: Path
    sha256: str | None
    problem: str | None

    @property
    def ok(self) -> bool:
        return self.problem is None


def check_gguf(path: Path, expected_sha256: str | None) -> FileCheck:
    """Check that `path` is a complete GGUF file (and the pinned one, when a sha256 is given).

    Nothing here hands the file to llama.cpp: a bad file is refused with a clear reason
    before the native loader could crash or misread it.
    """
    if not path.exists():
        return FileCheck(path, None, "file not found")
    if not path.is_file():
        return FileCheck(path, None, "not a regular file")
    try:
        with path.open("rb") as handle:
            header = handle.read(24)
    except OSError as exc:
        return FileCheck(path, None, f"cannot be read ({exc.strerror})")
    if len(header) < 24 or header[:4] != GGUF_MAGIC:
        return FileCheck(path, None, "is not a GGUF file (bad magic number)")
    version = struct.unpack("<I", header[4:8])[0]
    if version not in SUPPORTED_VERSIONS:
        return FileCheck(path, None, f"has unsupported GGUF version {version}")
    if problem := truncation_problem(path):
        return FileCheck(path, None, problem)
    digest = cached_sha256(path)
    if expected_sha256 and digest != expected_sha256.lower():
        return FileCheck(
            path,
            digest,
            f"sha256 {digest[:12]}… does not match the {expected_sha256[:12]}… in models.toml "
            "(truncated or replaced file)",
        )
    return FileCheck(path, digest, None)


def check_embedder_dir(path: Path, weights: str, expected_sha256: str | None) -> FileCheck:
    """Check a sentence-transformers model folder: present, with its weights file, hash matching."""
    if not path.is_dir():
        return FileCheck(path, None, "folder not found")
    weights_path = path / weights
    if not weights_path.is_file():
        return FileCheck(path, None, f"weights file {weights} not found in the folder")
    digest = cached_sha256(weights_path)
    if expected_sha256 and digest != expected_sha256.lower():
        return FileCheck(
            path,
            digest,
            f"sha256 of {weights} {digest[:12]}… does not match the {expected_sha256[:12]}… "
            "in models.toml",
        )
    return FileCheck(path, digest, None)


def require(check: FileCheck, what: str, fix: str) -> str:
    """Return the file's sha256, or raise a one-line ModelFileError naming the file and the fix."""
    if check.problem is not None:
        raise ModelFileError(f"{what} {check.path}: {check.problem}. {fix}")
    assert check.sha256 is not None
    return check.sha256
