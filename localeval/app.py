"""What the CLI commands do, composed from the library; output goes through click.echo."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from localeval.config import load_models_config
from localeval.criteria import DEFAULT_CRITERIA, criteria_from_options, load_criteria_file
from localeval.dataset import load_samples
from localeval.errors import PromptTooLongError, UsageError
from localeval.gates import DEFAULT_THRESHOLDS, evaluate_gates, parse_threshold
from localeval.judge import Usage
from localeval.metrics import MetricOptions, Tools, build_metric, metric_names
from localeval.metrics.rubric import criterion_scores, criterion_summaries
from localeval.modelfiles import check_embedder_dir, check_gguf
from localeval.pairwise import (
    DIRECT_WEIGHT,
    PairRow,
    PairVerdict,
    PairwiseSummary,
    compare_pair,
    compare_sample,
    load_pairs,
    summarize_verdicts,
    verdict_label,
)
from localeval.progress import Progress
from localeval.prompts import PROMPT_VERSION
from localeval.report import console
from localeval.report.results_json import check_writable, run_to_dict, write_json
from localeval.runner import evaluate, load_tools, new_run_id, order_metrics
from localeval.store import open_store


def evaluate_file(
    data: Path,
    metrics: Sequence[str],
    output: Path | None = None,
    threshold_overrides: Sequence[str] = (),
    judge_name: str | None = None,
    embedder_name: str | None = None,
    models_path: str | None = None,
    show_progress: bool = True,
    use_cache: bool = True,
    criteria_file: Path | None = None,
    criterion_options: Sequence[str] = (),
) -> bool:
    """Evaluate a data file, print the summary and gates, write results; True if all gates pass.

    Everything that can be checked without the models (options, the data file, the output
    folder, the model files) is checked before any model is loaded. The rubric's criteria
    come from `criteria_file` or `criterion_options` ("name: description"), else defaults.
    """
    names = order_metrics(metrics)
    options = metric_options(names, criteria_file, criterion_options)
    thresholds = dict(DEFAULT_THRESHOLDS)
    for text in threshold_overrides:
        metric, value = parse_threshold(text, metric_names())
        thresholds[metric] = value
    samples = load_samples(data)
    if output is not None:
        check_writable(output)
    models = load_models_config(models_path)
    click.echo(f"Loaded {len(samples)} samples from {data}; metrics: {', '.join(names)}", err=True)
    cache = open_store() if use_cache else None
    tools = load_tools(
        models, [build_metric(n, options) for n in names], judge_name, embedder_name, cache=cache
    )

    progress = Progress(len(samples), "Evaluating", enabled=show_progress)
    try:
        run = evaluate(
            samples,
            names,
            tools,
            on_sample=lambda _: progress.advance(),
            dataset=str(data),
            options=options,
        )
    finally:
        progress.close()

    summaries = run.summary()
    criteria = options.rubric_criteria or DEFAULT_CRITERIA
    if "rubric" in names:
        # each rubric criterion is summarised like a metric of its own ("rubric.accuracy")
        summaries.update(criterion_summaries([s.results["rubric"] for s in run.samples], criteria))
    gates = evaluate_gates(summaries, thresholds)
    click.echo(console.summary_table(summaries))
    categories = console.category_tables(run.summary_by_category())
    if categories:
        click.echo("\n" + categories)
    if gates:
        click.echo("\n" + console.gates_text(gates))
    click.echo("\n" + console.usage_text(run.usage))
    if output is not None:
        results = run_to_dict(run, gates)
        if "rubric" in names:
            results["summary"] = {m: s.as_dict() for m, s in summaries.items()}
            for entry, sample in zip(results["samples"], run.samples, strict=True):
                entry["scores"].update(criterion_scores(sample.results["rubric"], criteria))
        write_json(output, results)
        click.echo(f"Results written to {output}")
    return all(g.passed for g in gates)


def metric_options(
    names: Sequence[str], criteria_file: Path | None, criterion_options: Sequence[str]
) -> MetricOptions:
    """The metrics' options from the command line, checked against the metrics asked for."""
    if criteria_file is not None and criterion_options:
        raise UsageError(
            "give the rubric's criteria either with --criteria FILE or with --criterion, not both"
        )
    if (criteria_file is not None or criterion_options) and "rubric" not in names:
        raise UsageError(
            "--criteria and --criterion set the rubric metric's criteria; add -m rubric"
        )
    if criteria_file is not None:
        return MetricOptions(rubric_criteria=load_criteria_file(criteria_file))
    if criterion_options:
        return MetricOptions(rubric_criteria=criteria_from_options(criterion_options))
    return MetricOptions()


def describe_models(models_path: str | None = None) -> str:
    """A listing of the configured models: name, default marker, file status and path."""
    models = load_models_config(models_path)
    lines = [f"models file: {models.source}", "", "judges:"]
    for name, judge in models.judges.items():
        check = check_gguf(judge.path, judge.sha256)
        status = "ok" if check.ok else f"PROBLEM: {check.problem}"
        mark = "*" if name == models.default_judge else " "
        lines.append(f" {mark} {name:<24} {status:<10} {judge.path}  (n_ctx {judge.n_ctx})")
    lines += ["", "embedders:"]
    for name, embedder in models.embedders.items():
        check = check_embedder_dir(embedder.path, embedder.weights, embedder.sha256)
        status = "ok" if check.ok else f"PROBLEM: {check.problem}"
        mark = "*" if name == models.default_embedder else " "
        lines.append(f" {mark} {name:<24} {status:<10} {embedder.path}  (device {embedder.device})")
    lines += ["", "* = default. Missing files: run scripts/setup.sh."]
    return "\n".join(lines)


def compare_answers_file(
    data: Path,
    output: Path | None = None,
    fail_if_b_worse: bool = False,
    a_field: str = "answer_a",
    b_field: str = "answer_b",
    judge_name: str | None = None,
    models_path: str | None = None,
    show_progress: bool = True,
    use_cache: bool = True,
) -> bool:
    """Judge every pair in DATA, print the verdicts and B's win rate, write them as JSON.

    Returns False only when `fail_if_b_worse` is set and B is worse than A beyond noise
    (the 95% interval of B's win rate lies wholly below 0.5).
    """
    if a_field == b_field:
        raise UsageError(f"--a-field and --b-field are both '{a_field}'; name two fields")
    rows = load_pairs(data, a_field, b_field)
    if output is not None:
        check_writable(output)
    models = load_models_config(models_path)
    click.echo(f"Loaded {len(rows)} pairs from {data} ({a_field} vs {b_field})", err=True)
    # the judge asks faithfulness questions of each answer, and nothing needs the embedder
    cache = open_store() if use_cache else None
    tools = load_tools(models, [build_metric("faithfulness")], judge_name, cache=cache)
    assert tools.judge is not None
    started = time.perf_counter()
    before = tools.judge.usage.snapshot()
    verdicts: list[PairVerdict | None] = []
    progress = Progress(len(rows), "Comparing", enabled=show_progress)
    try:
        for row in rows:
            try:
                verdict: PairVerdict | None = compare_pair(
                    row.question, row.contexts, row.reference, row.answer_a, row.answer_b, tools
                )
            except PromptTooLongError:
                verdict = None
            verdicts.append(verdict)
            progress.advance()
    finally:
        progress.close()
    usage = tools.judge.usage - before
    usage.seconds = time.perf_counter() - started

    judged = [(r, v) for r, v in zip(rows, verdicts, strict=True) if v is not None]
    summary = summarize_verdicts(
        [r for r, _ in judged], [v for _, v in judged], n_undefined=len(rows) - len(judged)
    )
    gate_failed = fail_if_b_worse and summary.b_worse()
    click.echo(console.pairwise_rows_table(rows, verdicts))
    click.echo("\n" + console.pairwise_summary_text(summary))
    if fail_if_b_worse:
        state = "FAIL" if gate_failed else "PASS"
        click.echo(f"\nGate --fail-if-b-worse: {state} (fails when the whole 95% CI is below 0.5)")
    click.echo("\n" + console.usage_text(usage))
    if output is not None:
        write_json(output, pairwise_to_dict(data, tools, rows, verdicts, summary, usage))
        click.echo(f"Verdicts written to {output}")
    return not gate_failed


def pairwise_to_dict(
    data: Path,
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
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "dataset": str(data),
            "judge": {"name": tools.judge.name, "sha256": tools.judge.sha256},
            "prompt_version": PROMPT_VERSION,
            "direct_weight": DIRECT_WEIGHT,
            "usage": usage.as_dict(),
        },
        "summary": summary.as_dict(),
        "rows": entries,
    }


def describe_cache() -> str:
    """What the judge/embedding cache in the local database holds."""
    from localeval.cache import cache_stats
    from localeval.store import default_db_path

    stats = cache_stats(open_store())
    return "\n".join([f"database: {default_db_path()}", *stats.lines()])


def empty_cache() -> str:
    """Delete every cached judge call and embedding."""
    from localeval.cache import clear_cache

    judged, embedded = clear_cache(open_store())
    return f"Deleted {judged} cached judge calls and {embedded} cached embeddings."


def calibrate_files(
    paths: Sequence[Path],
    output: Path | None = None,
    limit: int | None = None,
    judge_name: str | None = None,
    embedder_name: str | None = None,
    models_path: str | None = None,
    show_progress: bool = True,
    use_cache: bool = True,
) -> None:
    """Measure agreement between metric scores and the labels of labelled files."""
    from localeval.calibrate import (
        PAIRWISE,
        SCORED_AS,
        calibrate,
        format_table,
        label_of,
        metric_of,
    )

    rows = []
    names = set()
    for path in paths:
        for sample in load_samples(path)[: limit or None]:
            # every row is checked before any model loads
            names.add(metric_of(sample, str(path)))
            label_of(sample, str(path))
            dataset = sample.extra.get("dataset")
            rows.append((dataset if isinstance(dataset, str) else path.stem, sample))
    if output is not None:
        check_writable(output)
    used = [build_metric(SCORED_AS.get(n, n)) for n in names if n != PAIRWISE]
    if PAIRWISE in names:  # the A/B judge asks faithfulness questions of each answer
        used.append(build_metric("faithfulness"))
    models = load_models_config(models_path)
    cache = open_store() if use_cache else None
    tools = load_tools(models, used, judge_name, embedder_name, cache=cache)
    click.echo(f"Calibrating on {len(rows)} labelled rows: {', '.join(sorted(names))}", err=True)
    progress = Progress(len(rows), "Calibrating", enabled=show_progress)
    try:
        result = calibrate(rows, tools, compare=compare_sample, on_row=lambda _: progress.advance())
    finally:
        progress.close()
    click.echo(format_table(result))
    judge = tools.judge
    if judge is not None:
        click.echo("\n" + console.usage_text(judge.usage))
    if output is not None:
        write_json(
            output,
            {
                "judge": {"name": judge.name, "sha256": judge.sha256} if judge else None,
                "agreements": [a.as_dict() for a in result.agreements],
                "counts": [
                    {"dataset": d, "metric": m, **c} for (d, m), c in result.counts().items()
                ],
                "rows": [vars(r) for r in result.rows],
            },
        )
        click.echo(f"Calibration written to {output}")
