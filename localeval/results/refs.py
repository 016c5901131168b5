"""Run references, defined once: what the user names a run by on the command line.

A reference is a results.json file, or a run of the history: `latest`, `latest~N`
(complete runs, the most recently finished first), a run id or the start of one. It is a
file when it exists as one (or as a folder, which is then refused as not a results file),
or looks like a path (has a "/" or ends in .json); `latest~N` is never a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

LATEST = re.compile(r"latest(?:~(\d+))?")


@dataclass(frozen=True)
class RunRef:
    """A run as the user named it."""

    text: str

    @property
    def path(self) -> Path | None:
        """The results.json file it names, or None for a run of the history."""
        if LATEST.fullmatch(self.text):
            return None
        path = Path(self.text)
        if path.exists() or "/" in self.text or path.suffix.lower() == ".json":
            return path
        return None

    @property
    def in_history(self) -> bool:
        return self.path is None

    def latest_back(self) -> int | None:
        """N for `latest~N` (0 for `latest`), None for anything else."""
        match = LATEST.fullmatch(self.text)
        return None if match is None else int(match.group(1) or 0)
