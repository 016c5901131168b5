"""results.json: the output contract of SPEC.md (fields may be added, never renamed)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from localeval.errors import UsageError
from localeval.gates import GateResult
from localeval.runner import RunResult, SampleResult


def sample_to_dict(result: SampleResult) -> dict[str, Any]:
    details: dict[str, Any] = {}
    for name, metric in result.results.items():
        entry = dict(metric.details)
        if metric.reason is not None:
            entry["undefined_reason"] = metric.reason
        details[name] = entry
    return {
        "sample_id": result.sample.sample_id,
        "category": result.sample.category,
        "scores": result.scores(),
        "details": details,
        # the inputs, so a report can show each sample's evidence without the data file
        "question": result.sample.question,
        "answer": result.sample.answer,
        "reference_answer": result.sample.reference_answer,
        "contexts": result.sample.contexts,
    }


def run_to_dict(run: RunResult, gates: list[GateResult]) -> dict[str, Any]:
    info = run.info
    by_category = run.summary_by_category()
    return {
        "run": {
            "id": info.run_id,
            "created": info.created,
            "dataset": info.dataset,
            "judge": info.judge,
            "embedder": info.embedder,
            "metrics": info.metrics,
            "prompt_version": info.prompt_version,
            "usage": run.usage.as_dict(),
        },
        "summary": {m: s.as_dict() for m, s in run.summary().items()},
        "summary_by_category": {
            category: {m: s.as_dict() for m, s in metrics.items()}
            for category, metrics in by_category.items()
        },
        "gates": [g.as_dict() for g in gates],
        "samples": [sample_to_dict(s) for s in run.samples],
    }


def check_writable(path: Path) -> None:
    """Fail before hours of work if the output file could not be written at the end."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(f"--output {path}: is a directory")
    if not folder.is_dir():
        raise UsageError(f"--output {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"--output {path}: folder {folder} is not writable")


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write atomically: a crash or a full disk leaves the old file or none, never half of one."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        with tempfile.NamedTemporaryFile(
            "w",
            encoding="utf-8",
            dir=folder,
            prefix=f".{path.name}.",
            suffix=".tmp",
            delete=False,
        ) as handle:
            tmp = Path(handle.name)
            json.dump(data, handle, ensure_ascii=False, indent=2, allow_nan=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        if "tmp" in locals():
            tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
