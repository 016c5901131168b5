"""results.json, defined once: the output contract of docs/reference.md (fields may be added, never
renamed), written streaming and atomically, and read back with its shape checked."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from localeval.data.file_rows import format_suffix
from localeval.data.samples import Sample
from localeval.data.textstream import text_chunks
from localeval.errors import DatasetError
from localeval.judge import Usage
from localeval.results.corrected import CorrectedSummary, corrected_for
from localeval.results.gates import GateResult
from localeval.results.model import RunInfo, RunResult, SampleResult
from localeval.results.output_files import OutputTarget, Protected, open_output, output_target
from localeval.results.summary import ScoreColumns, samples_with_sub_scores
from localeval.stats import MetricSummary


def sample_inputs(sample: Sample) -> dict[str, Any]:
    """The sample's own text, kept with its scores so a report can show the evidence in
    place without the data file."""
    return {
        "question": sample.question,
        "answer": sample.answer,
        "reference_answer": sample.reference_answer,
        "contexts": sample.contexts,
    }


def sample_to_dict(result: SampleResult) -> dict[str, Any]:
    details: dict[str, Any] = {}
    for name, metric in result.results.items():
        entry = dict(metric.details)
        if metric.reason is not None:
            entry["undefined_reason"] = metric.reason
        details[name] = entry
    return {
        "sample_id": result.sample.sample_id,
        "category": result.sample.category,
        "scores": result.scores(),
        "details": details,
        **sample_inputs(result.sample),
    }


def run_object(info: RunInfo, usage: Usage) -> dict[str, Any]:
    """results.json's `run`: what the run was, and what it cost."""
    run: dict[str, Any] = {
        "id": info.run_id,
        "created": info.created,
        "dataset": info.dataset,
        "skipped_rows": info.skipped_rows,
        "judge": info.judge,
        "embedder": info.embedder,
        "metrics": info.metrics,
        "prompt_version": info.prompt_version,
        "usage": usage.as_dict(),
    }
    if info.dataset_sha256 is not None:
        run["dataset_sha256"] = info.dataset_sha256
    if info.metric_settings:
        run["metric_settings"] = info.metric_settings
    if info.shard:
        run["shard"] = info.shard
    if info.until_decided is not None:
        run["until_decided"] = info.until_decided
    if info.software:
        run["software"] = info.software
    return run


#: per metric, and per category per metric, its corrected summary
CorrectedTables = tuple[
    Mapping[str, CorrectedSummary], Mapping[str, Mapping[str, CorrectedSummary]]
]


def run_report(
    info: RunInfo,
    usage: Usage,
    columns: ScoreColumns,
    gates: Sequence[GateResult] | Sequence[dict[str, Any]],
    samples: Callable[[], Iterable[dict[str, Any]]],
    corrected: CorrectedTables | None = None,
) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """A run's results.json, built here for every command and the Python API alike: its
    header (the run and its usage, the summaries overall and per category with the
    sub-scores each metric's spec declares, the gates) and its samples, each with those
    sub-scores among its scores, to stream after it (write_results).

    `columns`: the scores of the run's metrics, in sample order; `samples()`: the samples
    as results.json holds them, in the same order (called twice when a metric declares
    sub-scores, read one sample at a time); `corrected`: the metrics' means corrected by
    people's labels, overall and per category, each beside its metric's summary."""
    details = (sample["details"] for sample in samples())
    reported = columns.with_sub_scores(info.metrics, details)
    names = [name for name in reported.scores if name not in columns.scores]
    overall, by_category = corrected if corrected is not None else ({}, {})
    header = {
        "run": run_object(info, usage),
        "summary": _with_corrected(reported.summaries(), overall),
        "summary_by_category": {
            category: _with_corrected(metrics, by_category.get(category, {}))
            for category, metrics in reported.summaries_by_category().items()
        },
        "gates": [g if isinstance(g, dict) else g.as_dict() for g in gates],
    }
    return header, samples_with_sub_scores(samples(), info.metrics, names)


def _with_corrected(
    summaries: Mapping[str, MetricSummary], corrected: Mapping[str, CorrectedSummary]
) -> dict[str, Any]:
    """Each metric's summary entry, with its corrected mean where it has one."""
    return {
        m: {**s.as_dict(), **(corrected[m].as_dict() if m in corrected else {})}
        for m, s in summaries.items()
    }


def run_to_dict(run: RunResult, gates: list[GateResult]) -> dict[str, Any]:
    """results.json of a run held in memory (run_report)."""
    columns = run.metric_columns()
    # a run held in memory has no labels (they are kept with a run of the history): each
    # metric says how many it would need, as a stored run without labels does
    corrected = corrected_for(columns, run.info.metrics, {}, run.info.metric_settings)
    header, samples = run_report(
        run.info,
        run.usage,
        columns,
        gates,
        lambda: (sample_to_dict(s) for s in run.samples),
        (corrected.overall, corrected.by_category),
    )
    return {**header, "samples": list(samples)}


def check_output(path: Path, protected: Protected = ()) -> OutputTarget:
    """Fail before hours of work if the output could not be written at the end, or writing
    it would destroy something (localeval.results.output_files)."""
    return output_target(path, protected)


def write_json(target: OutputTarget | Path, data: dict[str, Any]) -> None:
    """Write atomically: a crash or a full disk leaves the old file or none, never half of one."""
    write_results(target, data, None)


def write_results(
    target: OutputTarget | Path,
    header: dict[str, Any],
    samples: Iterable[dict[str, Any]] | None,
) -> None:
    """Write `header` with a "samples" list (when `samples` is given) streamed in after it,
    one sample at a time, atomically: the file is the same as json.dump(..., indent=2) of
    the whole dict, but memory holds one sample at a time."""
    with open_output(target) as handle:
        _dump_streamed(handle, header, samples)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)


def _indented(text: str) -> str:
    # split at "\n" only: a string value may hold U+2028, which splitlines() would split at
    return "\n".join("    " + line for line in text.split("\n"))


def _dump_streamed(
    handle: TextIO, header: dict[str, Any], samples: Iterable[dict[str, Any]] | None
) -> None:
    if samples is None:
        handle.write(_dump(header) + "\n")
        return
    head = _dump(header)
    # the header's closing brace is replaced by the samples list, indented as json.dump would
    handle.write((head[:-2] + ",\n" if header else "{\n") + '  "samples": [')
    first = True
    for sample in samples:
        handle.write(("\n" if first else ",\n") + _indented(_dump(sample)))
        first = False
    handle.write("]\n}\n" if first else "\n  ]\n}\n")


HINT = "; write one with `localeval evaluate DATA --output FILE`"


def _file_text(path: Path) -> str:
    """The file's UTF-8 text, decompressed when its name ends in .gz (as outputs so named
    are written), by the data reader's own gzip reading and its messages."""
    if not format_suffix(path)[1]:
        return path.read_text(encoding="utf-8")
    return "".join(text_chunks(path, compressed=True))


def read_json_file(path: Path) -> Any:
    """A results file's JSON value; DatasetError naming the file if it is not JSON."""
    try:
        text = _file_text(path)
    except IsADirectoryError:
        raise DatasetError(str(path), "is a directory, not a results file") from None
    except UnicodeDecodeError:
        raise DatasetError(str(path), "is not UTF-8 text, so not a results file") from None
    except OSError as exc:
        raise DatasetError(str(path), f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            str(path), f"not a localeval results file (invalid JSON: {exc.msg}){HINT}", exc.lineno
        ) from None
    except ValueError as exc:  # NaN or Infinity, which JSON does not have
        raise DatasetError(str(path), f"not a localeval results file ({exc}){HINT}") from None
    except RecursionError:
        raise DatasetError(
            str(path), f"not a localeval results file (it nests too deeply to read){HINT}"
        ) from None
    return data


#: how far outside [0, 1] a score read from a file may be by rounding
SCORE_ROUNDING = 1e-6


def _no_constant(name: str) -> Any:
    """Python's json reads NaN and Infinity, which are not JSON (localeval never writes
    them): a file that has them was written or edited by something else."""
    raise ValueError(f"{name} is not a JSON value")


def score_problem(value: Any) -> str | None:
    """What makes `value` unusable as a score: a score is null or a number in [0, 1]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{json.dumps(value, ensure_ascii=False)[:40]} is not a number"
    # float32 rounding let earlier versions write 1.00000007 for a perfect similarity
    if not -SCORE_ROUNDING <= value <= 1.0 + SCORE_ROUNDING:
        return f"{value!r} is not between 0 and 1"
    return None


def sample_problem(number: int, sample: Any) -> str | None:
    """What makes the `number`th (1-based) sample of a results file unusable, or None."""
    if not isinstance(sample, dict) or not isinstance(sample.get("scores"), dict):
        return f"sample {number} has no scores"
    sample_id = sample.get("sample_id")
    if isinstance(sample_id, bool) or not isinstance(sample_id, str | int):
        return f"sample {number} has no sample_id (a string or an integer)"
    category = sample.get("category")
    if category is not None and not isinstance(category, str):
        return f"sample {number}: its category is not a string"
    for metric, value in sample["scores"].items():
        if problem := score_problem(value):
            return f"sample {number}, score '{metric}': {problem}"
    return None


def read_results_file(path: Path) -> dict[str, Any]:
    """Read and check a results.json file; DatasetError naming the file if it is not one."""
    data = read_json_file(path)
    problem = results_problem(data)
    if problem:
        raise DatasetError(str(path), f"not a localeval results file ({problem}){HINT}")
    result: dict[str, Any] = data
    return result


def results_problem(data: Any) -> str | None:
    """What makes `data` unusable as a results dict, or None when a report can be drawn."""
    if not isinstance(data, dict):
        return "the top level is not an object"
    expected = {"run": dict, "summary": dict, "gates": list, "samples": list}
    for key, kind in expected.items():
        if key not in data:
            return f"no '{key}'"
        if not isinstance(data[key], kind):
            return f"'{key}' is not {'an object' if kind is dict else 'a list'}"
    for index, gate in enumerate(data["gates"]):
        if not isinstance(gate, dict) or not {"metric", "threshold", "value", "passed"} <= set(
            gate
        ):
            return f"gate {index} lacks metric, threshold, value or passed"
        for key in ("threshold", "value"):
            if problem := score_problem(gate[key]):
                return f"gate {index}, {key}: {problem}"
    for number, sample in enumerate(data["samples"], start=1):
        if problem := sample_problem(number, sample):
            return problem
    for metric, summary in data["summary"].items():
        if not isinstance(summary, dict) or "mean" not in summary:
            return f"summary of '{metric}' has no mean"
        if problem := score_problem(summary["mean"]):
            return f"summary of '{metric}', mean: {problem}"
    return None


#: the name commands used before outputs were checked for what they would destroy
check_writable = check_output
