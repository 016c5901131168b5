"""A stored run as a reviewer sees it: each sample's text, its scores with their gates, and
every verdict the judge gave (localeval.results.verdicts); what a reviewer's mark on one of
them means as a label (localeval.labels.store). Labels carried over from another run of the
same samples find their items in localeval.labels.label_files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from localeval.database import Location, default_db_path
from localeval.errors import UsageError
from localeval.history.records import StoredRun
from localeval.history.store import open_history
from localeval.labels.carried import CARRIED
from localeval.labels.corrected import run_labels, stored_corrected, stored_people
from localeval.labels.store import SCORE_MARKS, VERDICT_MARKS, Label, check_unlocked
from localeval.metrics.base import LIKELIER
from localeval.prediction_powered import MIN_LABELLED
from localeval.results.corrected import RunCorrected, corrected_lines
from localeval.results.gates import DEFAULT_THRESHOLDS
from localeval.results.person_values import MetricLabels, estimate_order
from localeval.results.refs import RunRef
from localeval.results.summary import ScoreColumns
from localeval.results.verdicts import Verdict, sample_verdicts
from localeval.text import neutralised


@dataclass
class ReviewRun:
    """A complete run's samples, scores and judge verdicts, as labels refer to them."""

    db: Location
    run: StoredRun
    samples: list[dict[str, Any]]
    #: per sample id, the judge's verdicts
    verdicts: dict[str, list[Verdict]]

    @property
    def n_verdicts(self) -> int:
        return sum(len(v) for v in self.verdicts.values())

    def judged_metrics(self, sample_id: str) -> list[str]:
        """The sample's metrics that the judge's verdicts make (their scores can be marked)."""
        return list(dict.fromkeys(v.metric for v in self.verdicts.get(sample_id, [])))

    @property
    def n_scores(self) -> int:
        return sum(len(self.judged_metrics(s["sample_id"])) for s in self.samples)

    def gate(self, metric: str) -> float:
        """The metric's gate in this run (its default where the run had none)."""
        return float(self.run.thresholds.get(metric, DEFAULT_THRESHOLDS.get(metric, LIKELIER)))

    def score(self, sample_id: str, metric: str) -> float | None:
        sample = self.sample(sample_id)
        value = sample["scores"].get(metric) if sample is not None else None
        return float(value) if isinstance(value, int | float) else None

    def sample(self, sample_id: str) -> dict[str, Any] | None:
        """The run's sample of this id (None: the run has none)."""
        return self._by_id.get(sample_id)

    @cached_property
    def _by_id(self) -> dict[str, dict[str, Any]]:
        """The samples by id: a run's labels look their samples up one by one."""
        return {s["sample_id"]: s for s in self.samples}

    def verdict(self, sample_id: str, metric: str, index: int) -> Verdict | None:
        return next(
            (
                v
                for v in self.verdicts.get(sample_id, [])
                if v.metric == metric and v.index == index
            ),
            None,
        )

    def label_for(
        self, sample_id: str, metric: str, index: int | None, mark: str, reviewer: str
    ) -> Label:
        """A reviewer's mark on one item as a label; UsageError for an item the run does not
        have or a mark that does not fit it."""
        if index is None:
            score = self.score(sample_id, metric)
            if metric not in self.judged_metrics(sample_id) or score is None:
                raise UsageError(f"sample '{sample_id}' has no judged {metric} score to mark")
            if mark not in SCORE_MARKS:
                raise UsageError(f"a score is marked {', '.join(SCORE_MARKS)}, not {mark!r}")
            # too high: it deserves to fail; too low: to pass; right: where the gate put it
            passes = score >= self.gate(metric)
            value = {"too_high": 0.0, "too_low": 1.0}.get(mark, float(passes))
            return Label(sample_id, metric, None, "", value, reviewer, mark)
        found = self.verdict(sample_id, metric, index)
        if found is None:
            raise UsageError(f"sample '{sample_id}' has no {metric} verdict {index}")
        if mark not in VERDICT_MARKS:
            raise UsageError(f"a verdict is marked {' or '.join(VERDICT_MARKS)}, not {mark!r}")
        value = float(found.says_yes == (mark == "right"))
        return Label(sample_id, metric, index, found.text, value, reviewer, mark)

    def page(self) -> dict[str, Any]:
        """The run for the review page, as JSON."""
        return {
            "run": {
                "id": self.run.id,
                "dataset": _shown(Path(self.run.info.dataset or "").name),
                "judge": (self.run.info.judge or {}).get("name"),
                "metrics": self.run.info.metrics,
            },
            "samples": [self._page_sample(s) for s in self.samples],
            "n_verdicts": self.n_verdicts,
            "n_scores": self.n_scores,
            "estimate_order": self.estimate_order(),
            "min_labelled": MIN_LABELLED,
        }

    def estimate_order(self) -> list[str]:
        """The samples' ids in the page's "label for the estimate" order (a shuffle fixed
        by the run's samples: results.person_values.estimate_order)."""
        return estimate_order(s["sample_id"] for s in self.samples)

    def corrected_page(self) -> dict[str, Any]:
        """What the page shows of the means corrected by the labels made so far (and
        carried over from earlier runs): a line per metric, and the carried labels."""
        with open_history(self.db) as store:
            found = stored_corrected(store, self.run, self.score_columns(), self.samples)
            labels = run_labels(store, self.run, self.samples)
        return {
            "lines": corrected_lines(found.overall, self.run.id),
            "carried": [x.as_dict() for x in labels if x.source.startswith(CARRIED)],
        }

    def corrected(self) -> RunCorrected:
        """The run's means corrected by its labels (and those carried over), per metric
        and per category, as the run's summary would hold them."""
        with open_history(self.db) as store:
            return stored_corrected(store, self.run, self.score_columns(), self.samples)

    def people(self) -> dict[str, MetricLabels]:
        """Per metric with labels, people's values of the run's samples: which count for
        the corrected mean, which have verdicts still unlabelled, where reviewers disagree."""
        with open_history(self.db) as store:
            return stored_people(store, self.run, self.samples)

    def score_columns(self) -> ScoreColumns:
        """The run's scores as columns, for its corrected means."""
        return ScoreColumns.of(
            [s["sample_id"] for s in self.samples],
            [s.get("category") for s in self.samples],
            {m: [self.score(s["sample_id"], m) for s in self.samples] for m in self.metrics},
        )

    @property
    def metrics(self) -> list[str]:
        return self.run.info.metrics

    def _page_sample(self, sample: Mapping[str, Any]) -> dict[str, Any]:
        sample_id = sample["sample_id"]
        judged = self.judged_metrics(sample_id)
        scores = []
        for metric, value in sample["scores"].items():
            reason = sample["details"].get(metric, {}).get("undefined_reason")
            gated = metric in self.run.thresholds or metric in judged
            gate = self.gate(metric) if gated else None
            scores.append(
                {
                    "metric": metric,
                    "score": value,
                    "gate": gate,
                    "passes": None if gate is None or value is None else value >= gate,
                    "judged": metric in judged and value is not None,
                    "undefined_reason": _shown(reason),
                }
            )
        # the page shows text as the judge read it: no bidi override reorders it (the id
        # stays as stored: labels are sent back under it)
        return {
            "id": sample_id,
            "category": _shown(sample.get("category")),
            "question": _shown(sample.get("question")),
            "answer": _shown(sample.get("answer")),
            "reference_answer": _shown(sample.get("reference_answer")),
            "contexts": [_shown(c) for c in sample.get("contexts") or []],
            "scores": scores,
            "verdicts": [
                {**d, "text": _shown(d["text"]), "rests_on": _shown(d["rests_on"])}
                for d in (v.as_dict() for v in self.verdicts.get(sample_id, []))
            ],
        }


def _shown(text: Any) -> Any:
    """Text as the review page shows it (localeval.text.neutralised); anything else as is."""
    return neutralised(text) if isinstance(text, str) else text


def load_review_run(ref: str, db_path: Location | None = None) -> ReviewRun:
    """A complete run of the history, its database migrated for labels; UsageError for a
    results file, an unknown or incomplete run, or a database another process is writing."""
    if not RunRef(ref).in_history:
        raise UsageError(
            f"'{ref}' is a file; labels are kept with a run of the history: name the run "
            "(latest, latest~N, an id), see `localeval runs list`"
        )
    db = db_path or default_db_path()
    check_unlocked(db)
    with open_history(db, writable=True) as store:
        run = store.resolve(ref)
        if not run.complete:
            raise UsageError(
                f"run {run.id} is incomplete ({run.n_done} of {run.n_samples} samples); finish "
                "it by re-running its evaluate command"
            )
        samples = list(store.sample_dicts(run))
    verdicts = {s["sample_id"]: sample_verdicts(s) for s in samples}
    return ReviewRun(db, run, samples, verdicts)


def require_verdicts(review: ReviewRun) -> None:
    """UsageError when the run holds no judge verdict to review."""
    if review.n_verdicts:
        return
    metrics = ", ".join(review.run.info.metrics)
    raise UsageError(
        f"run {review.run.id} holds no judge verdicts to review (its metrics: {metrics}); "
        "evaluate with a judge metric such as faithfulness"
    )
