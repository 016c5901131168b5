"""A run as the history stores it: its row of the `runs` table, and its fingerprint."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localeval.errors import DatasetError, UsageError, param, rendered
from localeval.history.lease import Owner
from localeval.results.model import RunInfo


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def fingerprint(info: RunInfo) -> str:
    """What makes two runs the same evaluation, hashed: resuming one continues the other."""
    judge = info.judge or {}
    model = judge_model(judge)
    identity = {
        "dataset_sha256": info.dataset_sha256,
        "judge_sha256": judge.get("sha256"),
        **({"judge_model": model} if model else {}),
        # absent for runs recorded before settings were: their fingerprints stay as they were
        **({"judge_settings": judge["settings"]} if "settings" in judge else {}),
        "embedder_sha256": (info.embedder or {}).get("sha256"),
        # what besides its weights changes its vectors; absent (as for older runs) without
        **(
            {"embedder_settings": info.embedder["settings"]}
            if info.embedder and info.embedder.get("settings")
            else {}
        ),
        "prompt_version": info.prompt_version,
        "metrics": info.metrics,
        "metric_settings": info.metric_settings,
        # the map from the judge's verdicts to scores; absent (as for older runs) without one
        **({"calibration": judge["calibration"]} if "calibration" in judge else {}),
        # absent for a run of every sample: fingerprints of earlier runs stay as they were
        **({"shard": info.shard} if info.shard else {}),
    }
    return hashlib.sha256(json_text(identity).encode()).hexdigest()


@dataclass(frozen=True)
class StoredRun:
    """A run as the history holds it; `n_done` samples of `n_samples` are stored."""

    info: RunInfo
    fingerprint: str
    finished: str | None
    n_samples: int
    n_done: int
    thresholds: dict[str, float]
    gates: list[dict[str, Any]] | None
    #: the process that holds the run's lease (localeval.history.lease), and when it last stored
    #: a sample (unix time)
    owner: Owner | None = None
    heartbeat: float | None = None
    #: why the run can never be completed (its data changed while it was scored); None if it can
    invalid: str | None = None

    @property
    def id(self) -> str:
        return self.info.run_id

    @property
    def complete(self) -> bool:
        return self.finished is not None

    @property
    def status(self) -> str:
        if self.complete:
            return "complete"
        if self.invalid is not None:
            return f"invalid ({self.n_done}/{self.n_samples})"
        return f"incomplete ({self.n_done}/{self.n_samples})"


RUN_COLUMNS = (
    "id, created, finished, fingerprint, dataset_path, dataset_sha256, n_samples, judge_name, "
    "judge_sha256, embedder_name, embedder_sha256, prompt_version, metrics, metric_settings, "
    "thresholds, gates, (SELECT count(*) FROM run_samples s WHERE s.run_id = runs.id), "
    "skipped_rows, judge_settings, judge_extra, embedder_extra, owner, heartbeat, shard, invalid, "
    "until_decided, software"
)

#: the keys of a judge record that have columns of their own
_JUDGE_COLUMNS = ("name", "sha256", "settings")


def judge_extra(judge: dict[str, Any]) -> dict[str, Any]:
    """What a judge record holds besides its name, sha256 and settings."""
    return {k: v for k, v in judge.items() if k not in _JUDGE_COLUMNS}


def judge_model(judge: dict[str, Any]) -> dict[str, Any]:
    """What names a judge that has no file (a server's base_url, model, revision); nothing
    for a judge file. Neither its calibration (a key of its own in the fingerprint) nor what
    its server reported about itself is part of it: a server restarted part-way through a
    run says it again, and the run continues."""
    return {k: v for k, v in judge_extra(judge).items() if k not in ("calibration", "server")}


def embedder_extra(embedder: dict[str, Any]) -> dict[str, Any]:
    """What an embedder record holds besides its name and sha256."""
    return {k: v for k, v in embedder.items() if k not in ("name", "sha256")}


def _model(name: str | None, sha256: str | None) -> dict[str, Any] | None:
    if name is None:
        return None
    return {"name": name, "sha256": sha256} if sha256 else {"name": name}


def _judge(row: Sequence[Any]) -> dict[str, Any] | None:
    judge = _model(row[7], row[8])
    if judge is not None and row[18] is not None:
        judge["settings"] = json.loads(row[18])
    if judge is not None and row[19] is not None:
        judge.update(json.loads(row[19]))  # calibration; a server's base_url, model, ...
    return judge


def _embedder(row: Sequence[Any]) -> dict[str, Any] | None:
    embedder = _model(row[9], row[10])
    if embedder is not None and row[20] is not None:
        embedder.update(json.loads(row[20]))
    return embedder


def stored_run(row: Sequence[Any]) -> StoredRun:
    info = RunInfo(
        run_id=row[0],
        created=row[1],
        metrics=json.loads(row[12]),
        judge=_judge(row),
        embedder=_embedder(row),
        prompt_version=row[11] or None,  # '' when no metric asked a judge (migration 8)
        dataset=row[4],
        dataset_sha256=row[5],
        metric_settings=json.loads(row[13]),
        skipped_rows=json.loads(row[17]),
        shard=row[23],
        until_decided=json.loads(row[25]) if row[25] is not None else None,
        software=json.loads(row[26]) if row[26] is not None else {},
    )
    return StoredRun(
        info=info,
        fingerprint=row[3],
        finished=row[2],
        n_samples=row[6],
        n_done=row[16],
        thresholds=json.loads(row[14]),
        gates=json.loads(row[15]) if row[15] is not None else None,
        owner=Owner.parse(row[21]),
        heartbeat=row[22],
        invalid=row[24],
    )


def not_resumable(run: StoredRun) -> UsageError:
    """The error for continuing a run marked invalid."""
    return UsageError(
        f"run {run.id} can never be resumed: {run.invalid}; evaluate without {param('resume')} to "
        "start a new run"
    )


def skipped_row(error: DatasetError) -> dict[str, object]:
    """A row --skip-invalid left out, as results.json lists it (`row`: in a JSON array)."""
    row: dict[str, object] = {"file": error.path, "line": error.line, "field": error.field}
    if error.row is not None:
        row["row"] = error.row
    return {**row, "reason": rendered(error.detail)}


def ignore_invalid(_error: DatasetError) -> None:
    """Invalid rows on a second pass over the data: the first one reported them."""
