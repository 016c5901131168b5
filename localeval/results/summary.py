"""A run's summaries, defined once: per metric (and per category) the mean, its 95%
interval and the counts, from a run's scores wherever they come from (memory, the run
history, a results.json file)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.metrics import WithSubScores
from localeval.stats import MetricSummary, summarize

NO_CATEGORY = "(none)"


@dataclass
class ScoreColumns:
    """A run's scores in dataset order: sample ids, categories, and per metric one float per
    sample (NaN where the metric is undefined for it)."""

    sample_ids: list[str]
    categories: list[str | None]
    scores: dict[str, np.ndarray]

    @classmethod
    def of(
        cls,
        sample_ids: list[str],
        categories: list[str | None],
        scores: Mapping[str, Sequence[float | None]],
    ) -> ScoreColumns:
        """Columns from per-metric lists of scores (None where undefined)."""
        arrays = {
            m: np.asarray([np.nan if v is None else v for v in values], dtype=float)
            for m, values in scores.items()
        }
        return cls(sample_ids, categories, arrays)

    def summaries(self) -> dict[str, MetricSummary]:
        return {m: summarize(_defined_or_none(values)) for m, values in self.scores.items()}

    def summaries_by_category(self) -> dict[str, dict[str, MetricSummary]]:
        groups: dict[str, list[int]] = {}
        for index, category in enumerate(self.categories):
            groups.setdefault(category or NO_CATEGORY, []).append(index)
        return {
            category: {
                m: summarize(_defined_or_none(values[members])) for m, values in self.scores.items()
            }
            for category, members in sorted(groups.items())
        }


def _defined_or_none(values: np.ndarray) -> list[float | None]:
    return [None if np.isnan(v) else float(v) for v in values]


SubScores = Callable[[Mapping[str, Any]], dict[str, float | None]]


def sub_score_summaries(
    details: Iterable[Mapping[str, Any]], sub_scores: SubScores
) -> dict[str, MetricSummary]:
    """Each sub-score (e.g. "rubric.accuracy") summarised like a metric, from the samples'
    details for its metric; `sub_scores({})` names them all."""
    per_sample = [sub_scores(d) for d in details]
    return {name: summarize([s[name] for s in per_sample]) for name in sub_scores({})}


def with_sub_scores(
    samples: Iterable[dict[str, Any]], metrics: Sequence[WithSubScores]
) -> Iterator[dict[str, Any]]:
    """results.json samples with each metric's sub-scores among their `scores`."""
    for sample in samples:
        for metric in metrics:
            sample["scores"].update(metric.sub_scores(sample["details"].get(metric.name, {})))
        yield sample
