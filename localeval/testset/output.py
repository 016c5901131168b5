"""Writing JSONL outputs as every localeval output is written (localeval.results.output_files): a
file atomically, through a symlink its target, a device or FIFO as a stream; never over one
of the command's inputs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from localeval.errors import param
from localeval.results.output_files import OutputTarget, Protected, open_output, output_target


def check_output(
    output: Path, protected: Protected = (), option: str = param("output")
) -> OutputTarget:
    """What writing `output` will do, checked before any work; UsageError (naming it as
    `option`) when it would destroy something (one of `protected`, a folder, ...) or
    cannot be done."""
    return output_target(output, protected, option)


def named(paths: Sequence[Path], what: str) -> list[tuple[Path, str]]:
    """Protected files that are all `what` to the command ("one of the documents")."""
    return [(path, what) for path in paths]


def json_line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(", ", ": ")) + "\n"


def write_jsonl(target: OutputTarget | Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write rows as JSONL; a file is written beside itself, synced and renamed over, so a
    crash leaves the old file or the new one, never half of one."""
    with open_output(target) as handle:
        for row in rows:
            handle.write(json_line(row))
