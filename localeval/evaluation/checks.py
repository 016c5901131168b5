"""What an evaluation checks of its own inputs, before any model loads and again at the end:
data it can read twice, models.toml entries its metrics use and the gates they bring, which
metrics embed a language's text and whether the embedder reads it, the files an output must
never replace, and whether the data file is still what was checked."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from localeval.backends.model_files import sha256_file
from localeval.config import JudgeConfig, ModelsConfig
from localeval.data.samples import DatasetWarning
from localeval.data.stdin import is_pipe
from localeval.database import database_files, default_db_path, store_exists
from localeval.errors import UsageError, param, rendered
from localeval.evaluation.requests import EvaluationRequest
from localeval.evaluation.resume import DatasetScan
from localeval.metrics import EmbedsByLanguage, Metric, on_judge_scale
from localeval.results.gates import GatePlan, plan_gates
from localeval.results.refs import RunRef
from localeval.text import LANGUAGE_NAMES


def check_history_given(request: EvaluationRequest) -> None:
    """What needs stored runs (a --baseline of the history, --resume), checked before the
    database is opened: a usage error creates no database."""
    needs = [] if request.resume is None else [param("resume")]
    if request.baseline is not None and RunRef(request.baseline).in_history:
        needs.append(f"{param('baseline')} {request.baseline}")
    where = request.db or default_db_path()
    if needs and not store_exists(where):
        raise UsageError(
            f"{needs[0]}: there is no run history at {where} (give {param('db')} PATH or set "
            "LOCALEVAL_DB)"
        )


def check_not_a_pipe(data: Path, label: str) -> None:
    """An evaluation reads its data more than once: a pipe cannot be."""
    if is_pipe(data):  # `evaluate` itself copies a pipe to a file first
        raise UsageError(
            f"{label} is a pipe, which can be read only once, and an evaluation reads "
            "its data more than once; write it to a file first"
        )


def unused_models(
    request: EvaluationRequest, models: ModelsConfig, metrics: Sequence[Metric]
) -> list[str]:
    """--judge and --embedder must name models.toml entries (ConfigError for a name it
    lacks); what to note of one that no metric of the run uses."""
    notes, names = [], ", ".join(m.name for m in metrics)
    if request.judge is not None:
        models.judge(request.judge)
        if not any(m.uses_judge for m in metrics):
            notes.append(
                rendered(
                    f"{param('judge')} {request.judge} has no effect: no metric of this run "
                    f"({names}) uses a judge"
                )
            )
    if request.embedder is not None:
        models.embedder(request.embedder)
        if not any(m.uses_embedder for m in metrics):
            notes.append(
                rendered(
                    f"{param('embedder')} {request.embedder} has no effect: no metric of this "
                    f"run ({names}) uses an embedder"
                )
            )
    return notes


def run_gates(
    metrics: Sequence[Metric],
    overrides: Mapping[str, float],
    judge: Callable[[], JudgeConfig] | None,
) -> tuple[GatePlan, JudgeConfig | None]:
    """The gates of a run of `metrics` (plan_gates), for an evaluation and the pytest check
    alike, and the judge's models.toml entry they read: `judge()` gives it, asked only where
    a metric uses the judge (None: models given as they are, test doubles, which have no
    entry, so the metrics' defaults apply); `overrides` are the gates given."""
    judged = {m.name for m in metrics if m.uses_judge}
    config = judge() if judged and judge is not None else None
    own = config.thresholds if config is not None else {}
    names = [m.name for m in metrics]
    return plan_gates(names, on_judge_scale(judged), own, overrides), config


def embeds(metric: Metric, language: str) -> bool:
    """Whether `metric` embeds the text of samples in `language` (a metric that decides per
    language says so with `embeds_in`)."""
    if not metric.uses_embedder:
        return False
    return not isinstance(metric, EmbedsByLanguage) or bool(metric.embeds_in(language))


def embedder_language_warning(
    request: EvaluationRequest,
    models: ModelsConfig,
    metrics: Sequence[Metric],
    dataset: DatasetScan,
) -> DatasetWarning | None:
    """Samples in a language the embedder does not read, when a metric embeds their text."""
    embedder = models.embedder(request.embedder)
    if not embedder.languages:
        return None
    other = {
        k: n
        for k, n in dataset.languages.items()
        if k not in embedder.languages and any(embeds(m, k) for m in metrics)
    }
    if not other:
        return None
    users = [m.name for m in metrics if any(embeds(m, k) for k in other)]
    which = ", ".join(f"{n} in {LANGUAGE_NAMES.get(k, k)}" for k, n in sorted(other.items()))
    reads = ", ".join(LANGUAGE_NAMES.get(k, k) for k in embedder.languages)
    return DatasetWarning(
        str(request.data),
        f"{which} of {dataset.n_samples} samples, but embedder '{embedder.name}' is "
        f"for {reads} only (models.toml "
        f"'languages'): {', '.join(users)} will compare its texts poorly there; use a "
        "multilingual embedder (README, models.toml)",
    )


def protected_inputs(request: EvaluationRequest, models: ModelsConfig) -> list[tuple[Path, str]]:
    """The files an output must never overwrite: what the evaluation reads, and the run
    database with its journals."""
    inputs = [(request.data, "the data file"), (models.source, "the models file")]
    if request.baseline is not None and (path := RunRef(request.baseline).path) is not None:
        inputs.append((path, f"the {param('baseline')} results file"))
    for name, value in request.metric_options.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, Path):
                inputs.append((item, f"a file given to {param(name)}"))
    return inputs + database_files(request.db or default_db_path())


def data_change(data: Path, dataset: DatasetScan, label: str) -> str | None:
    """What happened to the data file since it was checked, if it is not the same."""
    try:
        same = sha256_file(data) == dataset.sha256
    except OSError as exc:
        return f"{label} could not be read again ({exc.strerror or exc})"
    return None if same else f"{label} changed while it was being evaluated"
