"""How much disk the llama.cpp judge's context states may take (localeval.backends.llama_states).

Set by `state_cache_gb` (models.toml) or `--state-cache-gb`, in GB of 10^9 bytes, a
decimal number; 0 keeps none. Where neither says, the limit is sized from the disk the
states are kept on: half of what it has free, counting the states already kept as free
(they are the store's own to replace), and never more than 64 GB. Why those figures:
docs/decisions.md ("How much disk the context states take").
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

from localeval.errors import ConfigError, param, rendered

#: the share of the disk's free space the states take where no limit is given
DISK_SHARE = 0.5
#: the most they take where no limit is given, in GB, however large the disk
CEILING_GB = 64.0


def limit_from_disk(folder: Path, held_bytes: int) -> int:
    """The default limit in bytes for states kept in `folder` (which need not exist yet),
    of which `held_bytes` are kept already."""
    free = shutil.disk_usage(_existing(folder)).free
    return int(min(DISK_SHARE * (free + held_bytes), CEILING_GB * 1e9))


def _existing(folder: Path) -> Path:
    """The folder, or the nearest folder above it that exists (the disk it will be on)."""
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            return candidate
    return Path("/")


def checked_gigabytes(value: object, where: str) -> float:
    """A size limit in GB as models.toml or a caller gives it: a number, at least 0, finite;
    ConfigError naming `where` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: 'state_cache_gb' must be a number of GB, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ConfigError(
            f"{where}: 'state_cache_gb' must be a number of GB, at least 0 (0: keep no "
            f"states); got {value}"
        )
    return float(value)


def gigabytes(size_bytes: int) -> str:
    """A size in GB as the limits are given, rounded up to a tenth: never too small."""
    return f"{math.ceil(size_bytes / 1e8) / 10:g} GB"


def room_note(kept: int, refused: int, refused_bytes: int, held: int, limit: int) -> str | None:
    """One line for a process whose states did not all fit under the limit, None where they
    did: how many were kept, and the limit that would keep them all."""
    if not refused:
        return None
    return rendered(
        f"context states: {kept} of {kept + refused} kept; the rest did not fit the limit of "
        f"{gigabytes(limit)}, so a later run evaluates those contexts again. A limit of "
        f"{gigabytes(held + refused_bytes)} ({param('state_cache_gb')}, or state_cache_gb in "
        "models.toml) would keep them all"
    )
