"""The output file of a call that reads the run history (`runs show`, `diff`, `report`,
`runs merge`, `labels export`, each with -o): checked before any work, and never one of the
results files it reads, nor the run database or the journal files SQLite keeps beside it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from localeval.database import Location, database_files, default_db_path
from localeval.results.contract import check_output
from localeval.results.output_files import OutputTarget
from localeval.results.refs import RunRef


def history_output(
    output: Path,
    db: Location | None,
    refs: Sequence[str] = (),
    role: str = "a results file read",
) -> OutputTarget:
    """What writing `output` will do (localeval.results.output_files), checked before any
    work: UsageError when it is a results file `refs` name (each `role` to the call), the
    run database `db` (default: default_db_path()) or one of its journals, or cannot be
    written."""
    files = [(path, role) for ref in refs if (path := RunRef(ref).path) is not None]
    return check_output(output, files + database_files(db or default_db_path()))
