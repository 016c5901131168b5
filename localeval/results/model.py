"""What a run is and what it produced, in memory: its description, each sample's results."""

from __future__ import annotations

import datetime as dt
import platform
import secrets
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from localeval.data.samples import Sample
from localeval.judge import Usage
from localeval.metrics import MetricResult
from localeval.results.summary import ScoreColumns
from localeval.stats import MetricSummary

#: the packages whose version can change a run's numbers: the judge's llama.cpp, the embedder's
#: stack, and localeval itself
NUMBER_PACKAGES = (
    "localeval",
    "llama-cpp-python",
    "torch",
    "sentence-transformers",
    "transformers",
)


def software_versions() -> dict[str, str | None]:
    """Python's version and each of NUMBER_PACKAGES' installed versions (None where absent),
    read from the installed metadata, so nothing is imported."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in NUMBER_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def new_run_id() -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


def now() -> str:
    """The current time as runs record it: ISO-8601 UTC, to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass
class SampleResult:
    """Every requested metric's result for one sample."""

    sample: Sample
    results: dict[str, MetricResult]
    #: what scoring this sample cost (judge calls, tokens, seconds)
    usage: Usage = field(default_factory=Usage)
    #: context tokens the judge restored from kept states instead of reading (not in usage)
    restored_tokens: int = 0

    def scores(self) -> dict[str, float | None]:
        return {name: r.score for name, r in self.results.items()}


@dataclass
class RunInfo:
    """What a run was: when, with which models and prompts, on which metrics."""

    run_id: str
    created: str
    metrics: list[str]
    judge: dict[str, Any] | None
    embedder: dict[str, Any] | None
    #: the prompt set the judge was asked with (localeval.prompts.sets); None when no
    #: metric of the run asked a judge
    prompt_version: str | None = None
    dataset: str | None = None
    dataset_sha256: str | None = None
    #: each metric's settings that change its scores, e.g. {"answer_relevancy": {"n_questions": 3}}
    metric_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: rows of the dataset left out by --skip-invalid: file, line, field, reason
    skipped_rows: list[dict[str, Any]] = field(default_factory=list)
    #: "K/N" when the run scored the K-th of N shards of the dataset (evaluate --shard)
    shard: str | None = None
    #: the versions of Python and of the packages that change a run's numbers
    #: (software_versions); empty for a run recorded before they were
    software: dict[str, str | None] = field(default_factory=dict)
    #: results.json's `run.until_decided`: the comparison `evaluate --until-decided` made
    #: (localeval.results.decision); None for a run no such comparison scored
    until_decided: dict[str, Any] | None = None


@dataclass
class RunResult:
    """A finished run held in memory: its description, per-sample results, the usage."""

    info: RunInfo
    samples: list[SampleResult]
    usage: Usage = field(default_factory=Usage)

    def metric_columns(self) -> ScoreColumns:
        """The metrics' scores, in sample order."""
        return ScoreColumns.of(
            [r.sample.sample_id for r in self.samples],
            [r.sample.category for r in self.samples],
            {
                m: [r.results[m].score if m in r.results else None for r in self.samples]
                for m in self.info.metrics
            },
        )

    def columns(self) -> ScoreColumns:
        """The metrics' scores and their sub-scores ("rubric.accuracy"), as reported."""
        return self.metric_columns().with_sub_scores(
            self.info.metrics,
            ({name: r.details for name, r in s.results.items()} for s in self.samples),
        )

    def summary(self) -> dict[str, MetricSummary]:
        """Each metric's summary, and each sub-score's, as results.json holds them."""
        return self.columns().summaries()

    def summary_by_category(self) -> dict[str, dict[str, MetricSummary]]:
        return self.columns().summaries_by_category()
