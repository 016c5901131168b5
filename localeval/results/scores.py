"""One side of a comparison of two runs: what the run was, and its scores and evidence."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localeval.errors import UsageError
from localeval.results.contract import read_json_file, sample_problem
from localeval.results.summary import ScoreColumns


@dataclass
class RunScores:
    """One side of a comparison: what the run was and its scores, wherever it came from."""

    label: str  # as the user named it: a run id, latest~1, a results.json path
    run: dict[str, Any]  # results.json's "run" object
    columns: ScoreColumns
    #: (sample_id, metric) -> that sample's evidence for the metric, or None
    details: Callable[[str, str], dict[str, Any] | None]

    @property
    def metrics(self) -> list[str]:
        return list(self.columns.scores)


def results_scores(data: Any, label: str) -> RunScores:
    """A results dict (SPEC.md's contract) as one side of a comparison; a comparison needs
    only its run and its samples' scores and details."""
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
    ids: list[str] = []
    categories: list[str | None] = []
    values: dict[str, list[float]] = {m: [] for m in metrics}
    details: dict[tuple[str, str], dict[str, Any]] = {}
    for number, sample in enumerate(data["samples"], start=1):
        if problem := sample_problem(number, sample):
            raise UsageError(f"{label}: not a localeval results file ({problem})")
        try:
            sample_id = str(sample["sample_id"])
            scores = sample["scores"]
            for metric in metrics:
                score = scores.get(metric)
                values[metric].append(np.nan if score is None else float(score))
            for metric, entry in (sample.get("details") or {}).items():
                if isinstance(entry, dict):  # evidence of another shape is not shown
                    details[sample_id, metric] = entry
        except (KeyError, TypeError, ValueError, AttributeError):
            raise UsageError(f"{label}: sample {number} is not in the results.json form") from None
        ids.append(sample_id)
        categories.append(sample.get("category"))
    columns = ScoreColumns(
        ids, categories, {m: np.asarray(v, dtype=float) for m, v in values.items()}
    )
    return RunScores(label, data["run"], columns, lambda s, m: details.get((s, m)))


def results_file_scores(path: Path) -> RunScores:
    """A results.json file as one side of a comparison."""
    return results_scores(read_json_file(path), str(path))
