"""A run's summaries, defined once: per metric (and per category) the mean, its 95%
interval and the counts, from a run's scores wherever they come from (memory, the run
history, a results.json file); and the sub-scores a metric's spec declares ("rubric.
accuracy"), read from the samples' details and summarised like metrics."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.metrics import spec
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

    def with_sub_scores(
        self, metrics: Sequence[str], details: Iterable[Mapping[str, Any]]
    ) -> ScoreColumns:
        """These columns and one more per sub-score of `metrics` (sub_score_values), read from
        each sample's details ({metric: details}, in these columns' order); NaN where a
        sample has none. Without a metric that declares sub-scores, these columns as they
        are (`details` is not read)."""
        if not declares_sub_scores(metrics):
            return self
        added: dict[str, np.ndarray] = {}
        for index, sample in enumerate(details):
            for name, value in sub_score_values(metrics, sample).items():
                if name not in added:
                    added[name] = np.full(len(self.sample_ids), np.nan)
                if value is not None:
                    added[name][index] = value
        return ScoreColumns(self.sample_ids, self.categories, {**self.scores, **added})

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


def sub_score_values(metrics: Sequence[str], details: Mapping[str, Any]) -> dict[str, float | None]:
    """One sample's sub-scores ("rubric.accuracy": 0.78): what the spec of each of `metrics`
    declares (MetricSpec.sub_scores) from the sample's details for that metric."""
    values: dict[str, float | None] = {}
    for metric in metrics:
        found = spec(metric)
        entry = details.get(metric)
        if found is not None and found.sub_scores is not None and isinstance(entry, Mapping):
            values.update(found.sub_scores(entry))
    return values


def declares_sub_scores(metrics: Sequence[str]) -> bool:
    return any((found := spec(m)) is not None and found.sub_scores is not None for m in metrics)


def samples_with_sub_scores(
    samples: Iterable[dict[str, Any]], metrics: Sequence[str], names: Sequence[str]
) -> Iterator[dict[str, Any]]:
    """results.json samples with the run's sub-scores `names` among their `scores` (None
    where a sample has none), one sample at a time."""
    for sample in samples:
        if names:
            values = sub_score_values(metrics, sample["details"])
            sample["scores"].update({name: values.get(name) for name in names})
        yield sample
