"""What `localeval.evaluate()` and `localeval.estimate_cost()` return: `Evaluation` (a scored
run: its gates, its comparison with a baseline, its results.json and views of it), with
`Decision` (until_decided's verdicts), and `EvaluationCost` (an estimate)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.errors import UsageError
from localeval.estimate.counting import Estimate
from localeval.estimate.division import Division
from localeval.evaluation.requests import EvaluationOutcome, IterationCost
from localeval.results.decision import WORSE
from localeval.results.diff import DEFAULT_MAX_DROP, Comparison, MetricChange
from localeval.results.gates import GateResult
from localeval.results.model import RunResult
from localeval.results.view import RunView, evidence_hint, read_run


@dataclass(frozen=True)
class Decision:
    """until_decided=True: results.json's `run.until_decided` (`report`: samples scored,
    each metric's verdict and interval, the cost), how the baseline is named, and why the
    two runs' scores may differ for reasons other than the system (`warnings`)."""

    report: dict[str, Any]
    baseline: str
    warnings: list[str]

    @property
    def verdicts(self) -> dict[str, str]:
        """Per gated metric: better, worse, no detectable change, or undecided."""
        return dict(self.report["verdicts"])

    @property
    def worse(self) -> list[str]:
        return [metric for metric, verdict in self.verdicts.items() if verdict == WORSE]


@dataclass(frozen=True)
class EvaluationCost:
    """What an evaluation will cost, counted without evaluating anything (`estimate_cost()`,
    as `evaluate --estimate`): judge calls, prompt tokens, generated tokens, cache answers
    and time, per metric and in total (`estimate`); with `ray`, how the cluster's actors
    divide it (`division`)."""

    estimate: Estimate
    division: Division | None = None
    #: where it was written as JSON (`output`), if it was
    written: Path | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON `evaluate --estimate --output` writes."""
        data = self.estimate.as_dict()
        if self.division is not None:
            data["estimate"]["ray"] = self.division.as_dict()
        return data


class Evaluation:
    """A finished evaluation: its gates, its comparison with a baseline, its results.json
    (`to_dict()`, read from the run history on first use) and views of it."""

    def __init__(
        self,
        outcome: EvaluationOutcome,
        db: Any,
        results: Callable[[], dict[str, Any]],
        scored: RunResult | None = None,
        comparison: Comparison | None = None,
        max_drop: float = DEFAULT_MAX_DROP,
        decision: Decision | None = None,
    ):
        self._outcome = outcome
        #: where the run is kept (None: in no history, db=None)
        self.db = db
        self._read = results
        self._results: dict[str, Any] | None = None
        #: the samples this call scored, as the engine returned them (all of them unless it
        #: continued a run); kept by the default events, None when `events` were given
        self.scored = scored
        #: with a baseline (not until_decided): the run compared with it, as `diff` does
        self.comparison = comparison
        self.max_drop = max_drop
        #: with until_decided: the verdicts, and what they cost
        self.decision = decision

    def _dict(self) -> dict[str, Any]:
        if self._results is None:
            self._results = self._read()
        return self._results

    @property
    def run_id(self) -> str:
        return self._outcome.run.id

    @property
    def complete(self) -> bool:
        """False for a run until_decided stopped once decided (`evaluate` without it goes on)."""
        return self._outcome.run.complete

    @property
    def n_scored(self) -> int:
        """Samples the run holds scored (every call's)."""
        return self._outcome.run.n_done

    @property
    def n_samples(self) -> int:
        return self._outcome.run.n_samples

    @property
    def from_states(self) -> IterationCost:
        """What this call's scoring restored from the judge's kept context states
        (`.samples_from_states`, `.restored_prompt_tokens`): the prompt-tuning loop's saving."""
        return self._outcome.from_states

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        """Per metric (and sub-score): mean, ci95 (its interval), n (samples with a score),
        n_undefined, and whatever else results.json's summary holds."""
        return copy.deepcopy(self._dict()["summary"])

    @property
    def gates(self) -> list[GateResult]:
        return self._outcome.gates

    @property
    def gates_from_judge(self) -> list[str]:
        """Metrics whose gate is the judge's own threshold (models.toml's `judge`)."""
        return list(self._outcome.from_judge)

    @property
    def judge(self) -> str | None:
        """The models.toml entry of the judge whose thresholds gate, if any."""
        return self._outcome.judge

    @property
    def regressions(self) -> list[MetricChange]:
        """With a baseline: the metrics worse by more than max_drop, beyond the noise."""
        return [] if self.comparison is None else self.comparison.regressions(self.max_drop)

    @property
    def passed(self) -> bool:
        """Whether every quality gate passed and, with a baseline, no metric regressed
        (until_decided: none was decided worse; a run stopped once decided has no gates)."""
        if self.decision is not None:
            return not self.decision.worse and (self._gates_passed or not self.complete)
        return self._gates_passed and not self.regressions

    @property
    def _gates_passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def samples(self) -> list[dict[str, Any]]:
        """Each sample as results.json holds it: its text, scores and details."""
        return copy.deepcopy(self._dict()["samples"])

    def to_dict(self) -> dict[str, Any]:
        """results.json (docs/reference.md), as `localeval evaluate --output` writes it."""
        return copy.deepcopy(self._dict())

    def view(self) -> RunView:
        """The run as the reports read it (its samples held)."""
        return read_run(self._dict())

    def summary_view(self) -> RunView:
        """The run's summaries as `localeval evaluate` prints them
        (localeval.reports.console.run_summary): overall and per category, with the gates,
        the cost and the diagnosis; its samples not held."""
        return self._outcome.view

    def to_pandas(self) -> Any:
        """One row per sample (indexed by sample_id): category, question, answer, then a
        column per score (NaN where undefined). Needs pandas (`localeval[notebook]`)."""
        pandas = _pandas()
        results = self._dict()
        scores = list(results["summary"])
        rows = [
            {
                "sample_id": s["sample_id"],
                "category": s.get("category"),
                "question": s.get("question"),
                "answer": s.get("answer"),
                **{m: s["scores"].get(m) for m in scores},
            }
            for s in results["samples"]
        ]
        columns = ["sample_id", "category", "question", "answer", *scores]
        frame = pandas.DataFrame(rows, columns=columns).astype(dict.fromkeys(scores, "float64"))
        return frame.set_index("sample_id")

    def evidence(self) -> Any:
        """The evidence as a long table: one row per sample and metric, with its score,
        `why` (the first piece of evidence for a low score, or why it is undefined) and the
        metric's full `details`. Needs pandas."""
        pandas = _pandas()
        rows = []
        for sample in self._dict()["samples"]:
            for metric, details in sample.get("details", {}).items():
                hint = evidence_hint(metric, details)
                rows.append(
                    {
                        "sample_id": sample["sample_id"],
                        "metric": metric,
                        "score": sample["scores"].get(metric),
                        "why": hint.plain() if hint is not None else None,
                        "details": details,
                    }
                )
        columns = ["sample_id", "metric", "score", "why", "details"]
        return pandas.DataFrame(rows, columns=columns).astype({"score": "float64"})

    def __repr__(self) -> str:
        failed = [g.metric for g in self.gates if not g.passed]
        verdict = f"gates failed: {', '.join(failed)}" if failed else "all gates passed"
        return (
            f"<Evaluation {self.run_id}: {self.n_samples} samples, "
            f"{', '.join(self._outcome.run.info.metrics)}; {verdict}>"
        )


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise UsageError(
            "pandas is not installed: pip install 'localeval[notebook]' (or pandas)"
        ) from None
    return pandas
