"""Context state kept on disk: llama.cpp's key/value cells of a prompt prefix, per file.

The llama.cpp judge evaluates a sample's contexts once per process and reuses them in
memory (localeval.backends.llama_judge). This store keeps that state across processes:
when a prompt's shared part (every segment but the last: the system message, the
contexts, the question) is long enough, the sequence's state after it is saved here, and a
later process whose prompt starts with the same segments restores it instead of
evaluating them. It is what llama.cpp's own server does with `--slot-save-path`, keyed
by content rather than by a slot's file name.

* The key is the judge's GGUF sha256, every setting that changes its numbers (which
  includes the call protocol), the llama.cpp build and the prefix's tokens segment by
  segment: a different model, setting or build never reads another's entry. Since a
  segment is always evaluated from its own start, the restored cells are the ones the
  judge would compute, bit for bit.
* A file is its header (the key, the prefix's tokens, the state's length and sha256) and
  the state. One that is truncated, altered or someone else's is ignored (and deleted):
  the prefix is evaluated instead.
* Written to a temporary file and renamed into place: a reader never sees half a file,
  and two processes that save the same entry each rename a whole one.
* Bounded: entries over the size limit are evicted, least recently used first (a read
  touches the file's time). Entries this process has used are not evicted for its own
  new ones: a set larger than the limit then keeps its first samples' states instead of
  evicting every state before its next run reads it.
* A save that fails (a full disk, a folder that cannot be written) is skipped, with one
  warning per process: the run goes on without it.

One folder per machine, in the user's cache folder (localeval.backends.model_files): never in
the run database, which a team may share on a server (docs/team.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import json
import logging
import os
import struct
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.backends.model_files import user_cache_folder
from localeval.backends.state_limit import gigabytes, limit_from_disk, room_note

LOG = logging.getLogger("localeval.states")

MAGIC = b"LOCALEVAL-KV-1\n"
SUFFIX = ".kv"
#: a shorter prefix's entry: the name of a kept state that begins with it
REF_SUFFIX = ".ref"
_TEMP_PREFIX = ".tmp-"
#: temporary files older than this are a crashed writer's, and removed
_STALE_TEMP_SECONDS = 3600.0
_LENGTH = struct.Struct("<Q")

#: the shortest shared part whose state is kept on disk, in tokens. Loading a state beats
#: evaluating it from a few tokens on (docs/measurements/speed.md: the break-even); the
#: floor is higher so that a second copy of what a kept state holds already is not
#: written. A part that holds the answer is never written, however long: the prompt says
#: where it starts (`Prompt.lasting`), as no later version of the answers reads it.
MIN_KEPT_TOKENS = 256


def states_folder() -> Path | None:
    """Where this user's context states are kept: <user cache folder>/localeval/states."""
    base = user_cache_folder()
    return base / "states" if base is not None else None


def state_key(parts: Sequence[Any], prefix: Sequence[Sequence[int]]) -> str:
    """The entry of the state after `prefix` (token segments), for a judge described by
    `parts` (its sha256, its settings, the llama.cpp build)."""
    text = json.dumps([list(parts), [list(s) for s in prefix]], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class StoreStats:
    """What the store holds."""

    folder: Path | None
    entries: int
    size_bytes: int
    #: the limit where no judge sets one: half the disk's free space, at most 64 GB
    default_limit_bytes: int = 0
    #: (entries, bytes) by the judge whose states they are ("" for states kept before
    #: their files named it)
    by_judge: dict[str, tuple[int, int]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        if self.folder is None:
            return ["context states: none (no user cache folder)"]
        return [
            f"context states kept: {self.entries} ({self.size_bytes / 1e6:.1f} MB) in "
            f"{self.folder}; limit: a judge's state_cache_gb, else half the disk's free "
            f"space up to 64 GB (here {gigabytes(self.default_limit_bytes)})",
            *(
                f"  judge {name or '(not named: kept by an older localeval)'}: {n} states, "
                f"{size / 1e6:.1f} MB"
                for name, (n, size) in sorted(self.by_judge.items())
            ),
        ]


class StateStore:
    """A folder of context states, at most `limit_bytes` of them."""

    def __init__(self, folder: Path, limit_bytes: int):
        self.folder = folder
        self.limit_bytes = limit_bytes
        #: the entries this process has saved or read: never evicted for its own saves
        self._used: set[Path] = set()
        self._warned = False
        #: this process's saves kept, and those refused for want of room (and their bytes)
        self.kept = self.refused = self.refused_bytes = 0

    def path(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

    def _ref(self, key: str) -> Path:
        return self.folder / f"{key}{REF_SUFFIX}"

    def contains(self, key: str) -> bool:
        """Whether a state is kept under `key`, or a longer one that begins with its prefix
        (the contents not checked)."""
        return self.path(key).is_file() or self._ref(key).is_file()

    def load(self, key: str, tokens: Sequence[int]) -> bytes | None:
        """The state kept for these prefix tokens under `key`, or None: absent, or a file
        that fails its checks (which is then deleted). It may be the state of a longer
        prefix that begins with these tokens (its cells after them are the caller's to drop)."""
        if self.path(key).is_file():
            return self._load(key, tokens, exact=True)
        try:
            target = json.loads(self._ref(key).read_bytes()).get("target")
        except (OSError, ValueError, UnicodeDecodeError, AttributeError):
            return None
        state = self._load(str(target), tokens, exact=False)
        if state is None:  # what it named is gone, or is not what it said
            _unlink(self._ref(key))
        return state

    def _load(self, key: str, tokens: Sequence[int], exact: bool) -> bytes | None:
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        state = _checked_state(data, key, tokens, exact)
        if state is None:
            LOG.debug("context state %s fails its checks", path.name)
            if exact or _checked_state(data, key, None, False) is None:
                _unlink(path)  # damaged, or someone else's: never read again
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: the last to be evicted
        self._used.add(path)
        return state

    def save(
        self,
        key: str,
        tokens: Sequence[int],
        state: bytes,
        shorter: Sequence[str] = (),
        judge: str = "",
    ) -> bool:
        """Keep `state` under `key`, and name it under the keys `shorter` of prefixes it
        begins with; False when it was not kept (no room without evicting what this process
        uses, or a write that failed: warned once). `judge`: whose state it is, for stats."""
        header = json.dumps(
            {
                "key": key,
                "judge": judge,
                "tokens": list(tokens),
                "state_bytes": len(state),
                "state_sha256": hashlib.sha256(state).hexdigest(),
            },
            separators=(",", ":"),
        ).encode("utf-8")
        size = len(MAGIC) + _LENGTH.size + len(header) + len(state)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if not self._make_room(size):
                self.refused, self.refused_bytes = self.refused + 1, self.refused_bytes + size
                return False
            self._write(self.path(key), [MAGIC, _LENGTH.pack(len(header)), header, state])
            self._used.add(self.path(key))
            self.kept += 1
            reference = json.dumps({"target": key}).encode("utf-8")
            for other in shorter:
                if not self.contains(other):
                    self._write(self._ref(other), [reference])
        except OSError as exc:
            self._warn(f"a context state was not saved ({exc.strerror or exc}); the run goes on")
            return False
        return True

    def _write(self, path: Path, parts: list[bytes]) -> None:
        temp = self.folder / f"{_TEMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex}{SUFFIX}"
        try:
            with temp.open("wb") as file:
                for part in parts:
                    file.write(part)
            os.replace(temp, path)  # atomic: a reader sees the whole file or none
        except BaseException:
            _unlink(temp)
            raise

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            LOG.warning("note: %s", message)

    def _entries(self) -> Iterator[tuple[Path, os.stat_result]]:
        try:
            names = list(os.scandir(self.folder))
        except OSError:
            return
        now = time.time()
        for entry in names:
            try:
                info = entry.stat()
            except OSError:
                continue  # evicted by another process meanwhile
            if entry.name.startswith(_TEMP_PREFIX):
                if now - info.st_mtime > _STALE_TEMP_SECONDS:
                    _unlink(Path(entry.path))
                continue
            # a folder or link named like an entry is not the store's: never counted or removed
            if entry.name.endswith(SUFFIX) and entry.is_file(follow_symlinks=False):
                yield Path(entry.path), info

    def _make_room(self, size: int) -> bool:
        """Evict least recently used entries (not those this process used) until `size`
        more bytes fit under the limit; False when they cannot."""
        if size > self.limit_bytes:
            return False
        entries = sorted(self._entries(), key=lambda e: e[1].st_mtime)
        used = sum(info.st_size for _, info in entries)
        for path, info in entries:
            if used + size <= self.limit_bytes:
                break
            if path not in self._used:
                _unlink(path)
                used -= info.st_size
        return used + size <= self.limit_bytes

    def held_bytes(self) -> int:
        """What the kept states take on disk (their sizes only: no file is read)."""
        return sum(info.st_size for _, info in self._entries())

    def stats(self) -> StoreStats:
        """What the store holds, by judge: reads each entry's header (for `cache stats`)."""
        entries = list(self._entries())
        size = sum(info.st_size for _, info in entries)
        by_judge: dict[str, tuple[int, int]] = {}
        for path, info in entries:
            name = _judge_of(path)
            n, held = by_judge.get(name, (0, 0))
            by_judge[name] = (n + 1, held + info.st_size)
        limit = limit_from_disk(self.folder, size)
        return StoreStats(self.folder, len(entries), size, limit, by_judge)

    def room_note(self) -> str | None:
        """What to say once this process is done where its states did not all fit."""
        held = self.held_bytes() if self.refused else 0
        return room_note(self.kept, self.refused, self.refused_bytes, held, self.limit_bytes)

    def clear(self) -> int:
        """Delete every entry (and the names of shorter prefixes); how many were deleted."""
        deleted = 0
        for path, _ in list(self._entries()):
            deleted += _unlink(path)
        for path in list(self.folder.glob(f"*{REF_SUFFIX}")):
            _unlink(path)
        return deleted


def default_store(limit_gb: float | None = None) -> StateStore | None:
    """The user's store with this limit (None: sized from the disk, localeval.backends.
    state_limit); None when there is no cache folder or the limit is 0."""
    folder = states_folder()
    if folder is None or (limit_gb is not None and limit_gb <= 0):
        return None
    if limit_gb is not None:
        return StateStore(folder, int(limit_gb * 1e9))
    store = StateStore(folder, 0)
    # sized when a judge loads: the states' sizes only, no header read
    store.limit_bytes = limit_from_disk(folder, store.held_bytes())
    return store


def store_stats() -> StoreStats:
    """What the user's store holds (its limit: the default's)."""
    store = default_store()
    if store is None:
        return StoreStats(None, 0, 0)
    return store.stats()


def clear_store() -> int:
    """Delete every context state of the user's store; how many were deleted."""
    store = default_store()
    return store.clear() if store is not None else 0


def _checked_state(
    data: bytes, key: str, tokens: Sequence[int] | None, exact: bool = True
) -> bytes | None:
    """The state in a file's bytes, if the file is whole and is this key's, for these tokens
    (`exact`) or tokens that begin with them (None: any tokens)."""
    start = len(MAGIC) + _LENGTH.size
    if len(data) < start or not data.startswith(MAGIC):
        return None
    (header_bytes,) = _LENGTH.unpack_from(data, len(MAGIC))
    try:
        header = json.loads(data[start : start + header_bytes])
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(header, dict):
        return None
    state = data[start + header_bytes :]
    kept = header.get("tokens")
    if not isinstance(kept, list):
        return None
    if tokens is not None and (kept if exact else kept[: len(tokens)]) != list(tokens):
        return None
    if (
        header.get("key") != key
        or header.get("state_bytes") != len(state)
        or header.get("state_sha256") != hashlib.sha256(state).hexdigest()
    ):
        return None
    return state


def _judge_of(path: Path) -> str:
    """The judge an entry's header names ("" where it names none or cannot be read)."""
    try:
        with path.open("rb") as file:
            start = file.read(len(MAGIC) + _LENGTH.size)
            if not start.startswith(MAGIC) or len(start) < len(MAGIC) + _LENGTH.size:
                return ""
            (length,) = _LENGTH.unpack_from(start, len(MAGIC))
            header = json.loads(file.read(min(length, 1 << 24)))
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
    name = header.get("judge") if isinstance(header, dict) else None
    return name if isinstance(name, str) else ""


def _unlink(path: Path) -> int:
    try:
        path.unlink()
    except OSError:
        return 0
    return 1


@functools.cache
def llama_build() -> str:
    """Which llama.cpp this is: llama-cpp-python's version, the CPU features and backends
    it was built with, and the sha256 of its libraries (a rebuild with other flags may
    compute other numbers, and lays out a state as it likes)."""
    import llama_cpp

    folder = Path(llama_cpp.__file__).parent / "lib"
    digest = hashlib.sha256()
    libraries = {
        p.resolve() for pattern in ("*.so*", "*.dylib", "*.dll") for p in folder.glob(pattern)
    }
    for library in sorted(libraries):
        digest.update(library.name.encode())
        digest.update(library.read_bytes())
    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    return f"{llama_cpp.__version__} {digest.hexdigest()} {info}"


def sequence_state(ctx: Any) -> bytes | None:
    """llama.cpp's state of sequence 0 of the context `ctx` (its key/value cells), or None."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(ctx, 0)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
    return bytes(memoryview(buffer)[:written]) if written else None


def set_sequence_state(ctx: Any, state: bytes) -> bool:
    """Make `state` (from `sequence_state`) sequence 0 of the context `ctx`; False if
    llama.cpp refused it."""
    import llama_cpp

    buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    return bool(llama_cpp.llama_state_seq_set_data(ctx, buffer, len(state), 0))
