"""Pairwise data and results: the rows to compare, B's record against A, the verdicts file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from localeval.data.samples import ALIASES, CANONICAL, Sample, load_samples
from localeval.errors import DatasetError, UsageError
from localeval.judge import Usage
from localeval.metrics.base import Tools
from localeval.pairwise.judge import DIRECT_WEIGHT, PairVerdict, Winner
from localeval.results.model import new_run_id, now
from localeval.stats import bootstrap_ci

# -- data ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairRow:
    """One row to compare: a question, optional contexts and reference, two answers."""

    sample_id: str
    question: str
    contexts: list[str] | None
    reference: str | None
    answer_a: str
    answer_b: str
    #: +1 B is better, -1 A is better, 0 equal; None when the data carries no label
    label: int | None = None
    line: int = 0


def load_pairs(path: Path, a_field: str = "answer_a", b_field: str = "answer_b") -> list[PairRow]:
    """Read and check every row; a DatasetError names the file, line and field."""
    rows = []
    for sample in load_samples(path):
        answers = [_answer(path, sample, name) for name in (a_field, b_field)]
        rows.append(
            PairRow(
                sample.sample_id,
                sample.question,
                sample.contexts,
                sample.reference_answer,
                answers[0],
                answers[1],
                _label(path, sample),
                sample.line,
            )
        )
    if not rows:
        raise DatasetError(str(path), "has no rows")
    return rows


def _answer(path: Path, sample: Sample, name: str) -> str:
    canonical = ALIASES.get(name, name)
    if canonical in CANONICAL and canonical != "answer":
        raise UsageError(f"'{name}' is the sample's {canonical}, not an answer to compare")
    value = sample.answer if canonical == "answer" else sample.extra.get(name)
    if value is None:
        raise DatasetError(str(path), "missing", sample.line, name)
    if not isinstance(value, str):
        raise DatasetError(str(path), "must be a string", sample.line, name)
    if not value.strip():
        raise DatasetError(str(path), "is empty", sample.line, name)
    return value


def _label(path: Path, sample: Sample) -> int | None:
    value = sample.extra.get("label")
    if value is None:
        return None
    if isinstance(value, bool) or value not in (-1, 0, 1):
        raise DatasetError(
            str(path), "must be +1 (B better), -1 (A better) or 0 (equal)", sample.line, "label"
        )
    return int(value)


# -- summary ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairwiseSummary:
    """B's record against A over all rows."""

    n: int
    wins_a: int
    wins_b: int
    ties: int
    flipped: int
    #: (wins of B + half the ties) / n
    win_rate_b: float
    ci95: tuple[float, float] | None
    #: rows with a label, and how many verdicts match it (a tie matches only a 0 label)
    labelled: int = 0
    agreed: int = 0
    #: rows that could not be judged (too long for the judge's context), left out of the rest
    n_undefined: int = 0

    def b_worse(self) -> bool:
        """B is worse than A beyond noise: the whole 95% interval lies below 0.5."""
        return self.ci95 is not None and self.ci95[1] < 0.5

    def agreement(self) -> float | None:
        return self.agreed / self.labelled if self.labelled else None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ci95"] = list(self.ci95) if self.ci95 is not None else None
        data["agreement"] = self.agreement()
        data["b_worse"] = self.b_worse()
        return data


def verdict_label(winner: Winner) -> int:
    return {"A": -1, "B": 1, "tie": 0}[winner]


def summarize_verdicts(
    rows: Sequence[PairRow], verdicts: Sequence[PairVerdict], n_undefined: int = 0
) -> PairwiseSummary:
    """B's record over the judged rows (`rows` and `verdicts` in the same order)."""
    points = [{"A": 0.0, "B": 1.0, "tie": 0.5}[v.winner] for v in verdicts]
    labelled = [(r, v) for r, v in zip(rows, verdicts, strict=True) if r.label is not None]
    return PairwiseSummary(
        n=len(verdicts),
        wins_a=sum(v.winner == "A" for v in verdicts),
        wins_b=sum(v.winner == "B" for v in verdicts),
        ties=sum(v.winner == "tie" for v in verdicts),
        flipped=sum(v.flipped for v in verdicts),
        win_rate_b=sum(points) / len(points) if points else 0.0,
        ci95=bootstrap_ci(points),
        labelled=len(labelled),
        agreed=sum(verdict_label(v.winner) == r.label for r, v in labelled),
        n_undefined=n_undefined,
    )


def verdicts_to_dict(
    dataset: str,
    tools: Tools,
    rows: Sequence[PairRow],
    verdicts: Sequence[PairVerdict | None],
    summary: PairwiseSummary,
    usage: Usage,
) -> dict[str, Any]:
    """The compare-answers results file: run, summary, and every row's verdict."""
    assert tools.judge is not None
    entries = []
    for row, verdict in zip(rows, verdicts, strict=True):
        entry: dict[str, Any] = {"sample_id": row.sample_id, "label": row.label}
        if verdict is None:
            entry["undefined_reason"] = "too long for the judge's context"
        else:
            entry.update(verdict.as_dict())
            if row.label is not None:
                entry["agrees_with_label"] = verdict_label(verdict.winner) == row.label
        entries.append(entry)
    return {
        "run": {
            "id": new_run_id(),
            "created": now(),
            "dataset": dataset,
            "judge": tools.judge.identity.record(with_settings=False),
            "prompt_version": tools.prompts.version,
            "direct_weight": DIRECT_WEIGHT,
            "usage": usage.as_dict(),
        },
        "summary": summary.as_dict(),
        "rows": entries,
    }
