"""One side of a comparison (`diff`, `evaluate --baseline`): a run as a RunView
(localeval.results.view) read from a results.json file, with its shape checked first."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localeval.errors import UsageError
from localeval.results.contract import read_json_file, sample_problem
from localeval.results.view import RunView, read_run

#: the name a side of a comparison had before every view of a run was a RunView
RunScores = RunView


def results_scores(data: Any, label: str) -> RunView:
    """A results dict (docs/reference.md's results.json) as one side of a comparison; a
    comparison needs only its run and its samples' scores and details, which must be in
    the results.json form (UsageError naming what is not)."""
    if (
        not isinstance(data, Mapping)
        or not isinstance(data.get("run"), dict)
        or not isinstance(data.get("samples"), list)
    ):
        raise UsageError(f"{label}: not a results.json file (no 'run' and 'samples')")
    metrics = data["run"].get("metrics") or []
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise UsageError(
            f"{label}: not a localeval results file (run.metrics is not a list of names)"
        )
    for number, sample in enumerate(data["samples"], start=1):
        if problem := sample_problem(number, sample):
            raise UsageError(f"{label}: not a localeval results file ({problem})")
        if not isinstance(sample.get("details") or {}, Mapping):
            raise UsageError(f"{label}: sample {number} is not in the results.json form")
    return read_run({**data, "run": {**data["run"], "metrics": metrics}}, label)


def results_file_scores(path: Path) -> RunView:
    """A results.json file as one side of a comparison."""
    return results_scores(read_json_file(path), str(path))
