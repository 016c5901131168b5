"""Where a report's data comes from: a results.json file (SPEC.md's output contract).

Reports are rendered from that dict alone, never from the dataset, so a report needs no
model and opens no path named inside the data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from localeval.errors import DatasetError, UsageError

HINT = "; write one with `localeval evaluate DATA --output FILE`"


def results_for_run(reference: str, db_path: Path | None = None) -> dict[str, Any]:
    """The results dict a report is rendered from, for a run reference given by the user:
    the path of a results.json file, or a run of the history (`latest`, `latest~N`, a run
    id or its start)."""
    from localeval.runs.resume import is_run_ref, results_dict

    path = Path(reference)
    looks_like_path = "/" in reference or path.suffix.lower() == ".json"
    if path.is_dir() or not is_run_ref(reference) or looks_like_path:
        if not path.exists():
            raise UsageError(f"'{reference}': no such results file")
        return load_results_file(path)
    from localeval.runs.history import RunStore

    store = RunStore.open(db_path)
    try:
        run = store.resolve(reference)
        if not run.complete:
            raise UsageError(
                f"run {run.id} is incomplete; finish it by re-running its evaluate command"
            )
        return results_dict(store, run)
    finally:
        store.close()


def load_results_file(path: Path) -> dict[str, Any]:
    """Read and check a results.json file; DatasetError naming the file if it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise DatasetError(str(path), "is a directory, not a results file") from None
    except UnicodeDecodeError:
        raise DatasetError(str(path), "is not UTF-8 text, so not a results file") from None
    except OSError as exc:
        raise DatasetError(str(path), f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            str(path), f"not a localeval results file (invalid JSON: {exc.msg}){HINT}", exc.lineno
        ) from None
    problem = results_problem(data)
    if problem:
        raise DatasetError(str(path), f"not a localeval results file ({problem}){HINT}")
    return data


def results_problem(data: Any) -> str | None:
    """What makes `data` unusable as a results dict, or None when a report can be drawn."""
    if not isinstance(data, dict):
        return "the top level is not an object"
    expected = {"run": dict, "summary": dict, "gates": list, "samples": list}
    for key, kind in expected.items():
        if key not in data:
            return f"no '{key}'"
        if not isinstance(data[key], kind):
            return f"'{key}' is not {'an object' if kind is dict else 'a list'}"
    for index, gate in enumerate(data["gates"]):
        if not isinstance(gate, dict) or not {"metric", "threshold", "value", "passed"} <= set(
            gate
        ):
            return f"gate {index} lacks metric, threshold, value or passed"
    for index, sample in enumerate(data["samples"]):
        if not isinstance(sample, dict) or not isinstance(sample.get("scores"), dict):
            return f"sample {index} has no scores"
    for metric, summary in data["summary"].items():
        if not isinstance(summary, dict) or "mean" not in summary:
            return f"summary of '{metric}' has no mean"
    return None
