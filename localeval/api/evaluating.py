"""The Python API: `localeval.evaluate()`, `localeval.diff()` and `localeval.report()`.

    import localeval

    run = localeval.evaluate("examples/demo.jsonl")  # or a DataFrame, a list of dicts, ...
    run.summary["faithfulness"]["mean"], run.passed
    run.to_pandas()        # one row per sample, a column per score
    run.evidence()         # one row per sample and metric: score and why

`evaluate` is the evaluation `localeval evaluate` runs (localeval.evaluation.scoring), with
the same checks, gates, cache and run history; data given in code is checked as a file's
rows are and scored from a JSONL file written for it (localeval.data.given). Models load
once per process and later calls reuse them. Nothing here prints: bad input raises the
errors of localeval.errors, what the user may not have meant is a LocalevalWarning, and
progress is tqdm's bar (a widget in a notebook).
"""

from __future__ import annotations

import copy
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.api.history import DEFAULT_DB, DefaultDb, diff, report
from localeval.api.history import history_location as _location
from localeval.data.given import given_rows, write_given
from localeval.data.samples import DatasetWarning
from localeval.database import Location, default_db_path
from localeval.errors import DatasetError, RunInUseError, UsageError
from localeval.evaluation.requests import EvaluationEvents, EvaluationRequest
from localeval.evaluation.scoring import ScoringRun
from localeval.evaluation.sources import results_dict
from localeval.history.records import StoredRun
from localeval.metrics import Tools, options_from_code, take_old_spellings
from localeval.results.gates import DEFAULT_MIN_DEFINED, GateResult
from localeval.results.model import RunResult, SampleResult
from localeval.results.view import RunView, evidence_hint, read_run
from localeval.tools import ModelPool


class LocalevalWarning(UserWarning):
    """Something in the data or the options the user may not have meant (an unknown
    field, a row skipped), or a run continued or left part-way."""


#: the models of this process, loaded by the first call that needs each
MODELS = ModelPool()


class Evaluation:
    """A finished evaluation: its results.json (`to_dict()`) and views of it."""

    def __init__(
        self,
        results: dict[str, Any],
        db: Location | None,
        gates: list[GateResult],
        scored: RunResult,
    ):
        self._results = results
        #: where the run is kept (None: in no history, db=None)
        self.db = db
        self._gates = gates
        #: the run with the samples this call scored, as the engine returned them: all of
        #: them unless it continued a run (the pytest gate's, with db=None, never does)
        self.scored = scored

    @property
    def run_id(self) -> str:
        return str(self._results["run"]["id"])

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        """Per metric (and sub-score): mean, ci95 (its interval), n (samples with a score),
        n_undefined, and whatever else results.json's summary holds."""
        return copy.deepcopy(self._results["summary"])

    @property
    def gates(self) -> list[GateResult]:
        return list(self._gates)

    @property
    def passed(self) -> bool:
        """Whether every quality gate passed."""
        return all(g.passed for g in self.gates)

    @property
    def samples(self) -> list[dict[str, Any]]:
        """Each sample as results.json holds it: its text, scores and details."""
        return copy.deepcopy(self._results["samples"])

    def to_dict(self) -> dict[str, Any]:
        """results.json (docs/reference.md), as `localeval evaluate --output` writes it."""
        return copy.deepcopy(self._results)

    def view(self) -> RunView:
        """The run as the reports read it."""
        return read_run(self._results)

    def to_pandas(self) -> Any:
        """One row per sample (indexed by sample_id): category, question, answer, then a
        column per score (NaN where undefined). Needs pandas (`localeval[notebook]`)."""
        pandas = _pandas()
        scores = list(self._results["summary"])
        rows = [
            {
                "sample_id": s["sample_id"],
                "category": s.get("category"),
                "question": s.get("question"),
                "answer": s.get("answer"),
                **{m: s["scores"].get(m) for m in scores},
            }
            for s in self._results["samples"]
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
        for sample in self._results["samples"]:
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
        gates = self.gates
        failed = [g.metric for g in gates if not g.passed]
        verdict = f"gates failed: {', '.join(failed)}" if failed else "all gates passed"
        return (
            f"<Evaluation {self.run_id}: {len(self._results['samples'])} samples, "
            f"{', '.join(self._results['run']['metrics'])}; {verdict}>"
        )


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise UsageError(
            "pandas is not installed: pip install 'localeval[notebook]' (or pandas)"
        ) from None
    return pandas


class _Events(EvaluationEvents):
    """What an evaluation in Python tells its caller: warnings, and a progress bar."""

    def __init__(self, progress: bool, kept: bool):
        self.progress = progress
        self.kept = kept
        self.bar: Any = None
        self.results: list[SampleResult] = []

    def skipped(self, error: DatasetError) -> None:
        _warn(f"Skipped: {error}")

    def warned(self, warning: DatasetWarning) -> None:
        _warn(str(warning))

    def noted(self, message: str) -> None:
        _warn(message)

    def in_use(self, busy: RunInUseError) -> None:
        _warn(f"{busy}, so this evaluation starts a run of its own")

    def resuming(self, run: StoredRun) -> None:
        _warn(
            f"continuing run {run.id}: {run.n_done} of {run.n_samples} samples were scored "
            "before it stopped (resume=False starts a new run)"
        )

    def scoring(self, run: StoredRun) -> None:
        if self.progress:
            from tqdm.auto import tqdm  # a widget in a notebook, text elsewhere

            self.bar = tqdm(
                total=run.n_samples, initial=run.n_done, desc="Evaluating", unit="sample"
            )

    def scored(self, result: SampleResult) -> None:
        self.results.append(result)
        if self.bar is not None:
            self.bar.update(1)

    def scoring_ended(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def stopped(self, run: StoredRun, n_done: int) -> None:
        if self.kept:
            _warn(
                f"run {run.id} is saved with {n_done} of {run.n_samples} samples scored; "
                "the same call continues it"
            )


def _warn(message: str) -> None:
    warnings.warn(message, LocalevalWarning, stacklevel=_callers_level())


#: the localeval package (this module sits in its api/ folder)
_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _callers_level() -> int:
    """The stacklevel of the first frame outside localeval: a warning points at the
    caller's own line, however deep in the engine it was raised."""
    frame, level = sys._getframe(1), 1  # _warn's frame is level 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        _PACKAGE_FOLDER
    ):
        frame, level = frame.f_back, level + 1
    return level


def evaluate(
    data: Any,
    metrics: Sequence[str] | None = None,
    *,
    judge: str | None = None,
    embedder: str | None = None,
    models: str | os.PathLike[str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    db: str | os.PathLike[str] | Location | DefaultDb | None = DEFAULT_DB,
    min_defined: float = DEFAULT_MIN_DEFINED,
    gate_on: str = "auto",
    use_cache: bool = True,
    skip_invalid: bool = False,
    resume: bool = True,
    progress: bool = True,
    options: Mapping[str, Any] | None = None,
    tools: Tools | Callable[[], Tools] | None = None,
) -> Evaluation:
    """Score `data` and check the quality gates, as `localeval evaluate` does.

    data: a data file (JSONL, JSON, CSV, or .gz), a list of dicts (or Sample objects), a
    pandas DataFrame or a datasets.Dataset, with localeval's or Ragas' field names.
    metrics: default the four RAG metrics. judge, embedder: models.toml entries (`models`,
    found as by the command line). thresholds: metric -> minimum mean, over the defaults.
    db: the run history the run is kept in (a file, a postgresql:// URL; default as the
    command line's); None keeps no run (the cache is then the default database's).
    gate_on: which mean a gate reads, as --gate-on: "judge", "corrected" (people's labels,
    prediction-powered) or "auto" (corrected where the run has enough labels).
    use_cache=False asks the models afresh; skip_invalid: leave out invalid rows (each a
    warning) instead of raising; resume=False starts a new run rather than continuing an
    interrupted one of the same evaluation; options: the metrics' own (as the command
    line's, by dest: {"rubric_criteria": "rubric.yaml"}); tools: models already loaded
    (test doubles, or a function giving them once the data is checked), with the
    metrics' default gates. Raises localeval.errors' errors.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    with tempfile.TemporaryDirectory(prefix="localeval-") as scratch:
        path, label = _data_file(data, Path(scratch), skip_invalid)
        history = None if db is None else _location(db)
        request = EvaluationRequest(
            path,
            tuple(metrics or ()),
            thresholds=dict(thresholds or {}),
            judge=judge,
            embedder=embedder,
            models=None if models is None else str(models),
            skip_invalid=skip_invalid,
            db=history if db is not None else Path(scratch, "runs.db"),
            cache_db=default_db_path() if db is None else None,
            new_run=not resume,
            use_cache=use_cache,
            metric_options=_metric_options(options or {}),
            min_defined=min_defined,
            gate_on=gate_on,
            data_label=label,
        )
        return _evaluated(request, _Events(progress, kept=db is not None), tools)


def _data_file(data: Any, scratch: Path, skip_invalid: bool) -> tuple[Path, str | None]:
    """The data file to score (a file given, or one written in `scratch` for data given in
    code), and the name to show for data given in code."""
    found = given_rows(data)
    if found is None:
        return Path(data), None
    rows, label = found
    path = scratch / "samples.jsonl"
    write_given(rows, label, path, skip_invalid)
    return path, label


def _evaluated(
    request: EvaluationRequest, events: _Events, tools: Tools | Callable[[], Tools] | None
) -> Evaluation:
    """Run the evaluation the command line runs, with the process's models (or `tools`)."""
    pool = MODELS if tools is None else None
    with ScoringRun(request, events, tools=tools, pool=pool) as evaluation:
        outcome = evaluation.run()
        results = results_dict(evaluation.store, outcome.run)
        kept = evaluation.store.path if events.kept else None
    scored = RunResult(outcome.run.info, events.results, outcome.usage)
    return Evaluation(results, kept, outcome.gates, scored)


def _metric_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics' options given in code, by dest, as the command line hands them on: a
    path as a Path, a repeatable option's single value as a list; an unknown name refused,
    an old one taken with a DeprecationWarning."""
    current, renamed = take_old_spellings(given)
    for option in renamed:
        warnings.warn(
            f"options: '{option.old_dest}' is now '{option.dest}'; the old name will be "
            "removed in a later release",
            DeprecationWarning,
            stacklevel=3,
        )
    return options_from_code(current)


__all__ = ["DEFAULT_DB", "Evaluation", "LocalevalWarning", "diff", "evaluate", "report"]
