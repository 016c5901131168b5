"""A RAG quality gate for a project's own test suite.

    from localeval.testing import assert_rag_quality

    def test_rag_quality():
        assert_rag_quality("tests/rag_samples.jsonl", thresholds={"faithfulness": 0.85})

`assert_rag_quality` evaluates the samples with the local models (localeval.evaluate,
keeping no run in the history) and raises an AssertionError that lists each failing gate
with its likely cause and remedies, and the worst samples. Under pytest the `rag_quality`
fixture (localeval.pytest_plugin) does the same and loads the models once per test session.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from localeval.config import EmbedderConfig, JudgeConfig, load_models_config
from localeval.data.samples import Sample
from localeval.database import Database, open_store
from localeval.embedder import Embedder
from localeval.engine import order_metrics
from localeval.errors import UsageError
from localeval.evaluation.checks import run_gates
from localeval.judge import Judge
from localeval.metrics import DEFAULT_METRICS, Tools, build_metric, metric_names
from localeval.results import view
from localeval.results.contract import run_to_dict
from localeval.results.gates import GateResult, check_threshold_values
from localeval.results.model import RunResult
from localeval.results.view import RunView, read_run
from localeval.tools import load_tools, tools_for

#: how many of the worst samples a failure message names
WORST_IN_MESSAGE = 3

DataArg = str | os.PathLike[str] | Sequence[Sample | Mapping[str, Any]]


@dataclass
class QualityRun:
    """An evaluated run and its gates; `results()` is the results.json dict (docs/reference.md)."""

    run: RunResult
    gates: list[GateResult]

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    def mean(self, metric: str) -> float | None:
        return self.run.summary()[metric].mean

    def results(self) -> dict[str, Any]:
        return run_to_dict(self.run, self.gates)

    def view(self) -> RunView:
        """The run as the reports read it (localeval.reports.html.render_html(quality.view()))."""
        return read_run(self.results())


@dataclass
class ModelCache:
    """Judges and embedders by their settings, so that many checks load each model once.

    Models come from localeval.tools, with their files checked; with `use_cache` (the
    default) they sit behind the persistent judge/embedding cache of the run database
    ($LOCALEVAL_DB, a file or a team's PostgreSQL URL, or .localeval/localeval.db), so a
    test re-run with unchanged samples makes no judge call and loads no model.
    """

    use_cache: bool = True
    judges: dict[JudgeConfig, Judge] = field(default_factory=dict)
    embedders: dict[EmbedderConfig, Embedder] = field(default_factory=dict)
    _store: Database | None = field(default=None, init=False, repr=False)

    def tools(
        self,
        metrics: Sequence[str],
        judge: str | None = None,
        embedder: str | None = None,
        models: str | os.PathLike[str] | None = None,
    ) -> Tools:
        """The models these metrics use (and no others), loading any not loaded yet."""
        built = [build_metric(n) for n in metrics]
        if not any(m.uses_judge or m.uses_embedder for m in built):
            return Tools()
        config = load_models_config(models)
        judge_config = config.judge(judge) if any(m.uses_judge for m in built) else None
        embedder_config = config.embedder(embedder) if any(m.uses_embedder for m in built) else None
        missing = [
            m
            for m in built
            if (m.uses_judge and judge_config not in self.judges)
            or (m.uses_embedder and embedder_config not in self.embedders)
        ]
        if missing:
            if self.use_cache and self._store is None:
                self._store = open_store()
            loaded = load_tools(config, missing, judge, embedder, cache=self._store)
            # behind the cache, models load on their first miss, so a surplus wrapper
            # of a model already held costs nothing
            if judge_config is not None and loaded.judge is not None:
                self.judges.setdefault(judge_config, loaded.judge)
            if embedder_config is not None and loaded.embedder is not None:
                self.embedders.setdefault(embedder_config, loaded.embedder)
        return tools_for(
            judge_config,
            self.judges[judge_config] if judge_config is not None else None,
            self.embedders[embedder_config] if embedder_config is not None else None,
        )

    def close(self) -> None:
        self.judges.clear()
        self.embedders.clear()
        if self._store is not None:
            self._store.close()
            self._store = None


def failure_message(quality: QualityRun, source: str) -> str:
    """What a failed check says: each failing gate with cause and remedies, what passed,
    and the samples that pulled the means down."""
    failed = [g for g in quality.gates if not g.passed]
    passed = [g for g in quality.gates if g.passed]
    count = len(quality.run.samples)
    lines = [
        f"RAG quality gates failed: {len(failed)} of {len(quality.gates)} on {source} "
        f"({count} sample{'' if count == 1 else 's'})"
    ]
    lines += [f"  FAIL {g.explanation()}" for g in failed]
    if passed:
        lines.append("  passed: " + "; ".join(g.line() for g in passed))
    worst = [w for w in quality.view().worst(WORST_IN_MESSAGE) if w.below]
    if worst:
        lines.append("  worst samples:")
        for item in worst:
            details = item.sample.get("details", {}).get(item.metric)
            hint = view.evidence_hint(item.metric, details)
            why = f" - {hint.plain()}" if hint is not None else ""
            lines.append(
                f"    {view.text(item.sample.get('sample_id'))}: {item.metric} "
                f"{item.score:.3f}{why}"
            )
    return "\n".join(lines)


def assert_rag_quality(
    data: DataArg,
    thresholds: Mapping[str, float] | None = None,
    metrics: Sequence[str] | None = None,
    judge: str | None = None,
    embedder: str | None = None,
    models: str | os.PathLike[str] | None = None,
    tools: Tools | None = None,
    cache: ModelCache | None = None,
    use_cache: bool = True,
) -> QualityRun:
    """Evaluate `data` and raise AssertionError unless every quality gate passes.

    data: a JSONL/JSON/CSV file, or a list of Sample objects or dicts with the dataset's
    fields. thresholds: gates replacing the metrics' defaults (metric -> minimum mean).
    metrics: default the four RAG metrics. judge, embedder: names from models.toml
    (`models`, default as for the CLI). tools: already loaded models (e.g. test doubles);
    cache: a ModelCache to load models into once for many checks; use_cache=False (without
    `cache`) asks the judge afresh instead of reusing cached answers of earlier runs.
    Returns the run and its gates when all pass, for further checks or a report.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's
    from localeval import api  # the evaluation itself, imported when a check runs

    names = order_metrics(metrics if metrics is not None else DEFAULT_METRICS)
    overrides = check_threshold_values(thresholds or {}, names, metric_names())
    # test doubles (`tools`) have no models.toml entry, so the metrics' defaults apply to them
    entry = None if tools is not None else lambda: load_models_config(models).judge(judge)
    limits = run_gates([build_metric(n) for n in names], overrides, entry)[0].thresholds
    if not limits:
        raise UsageError(
            f"no quality gate applies to {', '.join(names)}: give thresholds for them, "
            "or the check could never fail"
        )
    given: Tools | Callable[[], Tools] | None = tools
    if tools is None and cache is not None:
        given = partial(cache.tools, names, judge, embedder, models)
    with warnings.catch_warnings():
        # the check says only whether the gates pass, as it always has
        warnings.simplefilter("ignore", api.LocalevalWarning)
        evaluation = api.evaluate(
            data,
            names,
            judge=judge,
            embedder=embedder,
            models=models,
            thresholds=limits,  # every gate, resolved here: the check must have one
            db=None,  # a test's check is not a run to keep
            use_cache=use_cache,
            progress=False,
            tools=given,
        )
    quality = QualityRun(evaluation.scored, evaluation.gates)
    if not quality.passed:
        source = str(data) if isinstance(data, str | os.PathLike) else "the samples given"
        raise AssertionError(failure_message(quality, source))
    return quality
