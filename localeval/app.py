"""What the CLI commands do, composed from the library; output goes through click.echo."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click

from localeval.config import load_models_config
from localeval.dataset import load_samples
from localeval.errors import UsageError
from localeval.gates import DEFAULT_THRESHOLDS, evaluate_gates, parse_threshold
from localeval.metrics import build_metric, metric_names
from localeval.modelfiles import check_embedder_dir, check_gguf
from localeval.progress import Progress
from localeval.report import console
from localeval.report.output import write_text
from localeval.report.results_json import check_writable, run_to_dict, write_json
from localeval.runner import evaluate, load_tools, order_metrics
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
) -> bool:
    """Evaluate a data file, print the summary and gates, write results; True if all gates pass.

    Everything that can be checked without the models (options, the data file, the output
    folder, the model files) is checked before any model is loaded.
    """
    names = order_metrics(metrics)
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
        models, [build_metric(n) for n in names], judge_name, embedder_name, cache=cache
    )

    progress = Progress(len(samples), "Evaluating", enabled=show_progress)
    try:
        run = evaluate(
            samples, names, tools, on_sample=lambda _: progress.advance(), dataset=str(data)
        )
    finally:
        progress.close()

    summaries = run.summary()
    gates = evaluate_gates(summaries, thresholds)
    click.echo(console.summary_table(summaries))
    categories = console.category_tables(run.summary_by_category())
    if categories:
        click.echo("\n" + categories)
    if gates:
        click.echo("\n" + console.gates_text(gates))
    click.echo("\n" + console.usage_text(run.usage))
    if output is not None:
        write_json(output, run_to_dict(run, gates))
        click.echo(f"Results written to {output}")
    return all(g.passed for g in gates)


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


REPORT_FORMATS = ("html", "md", "junit", "json")


def render_report(
    run: str,
    report_format: str,
    baseline: str | None = None,
    junit_samples: bool = False,
    worst: int = 5,
) -> str:
    """A run's report as text in one of REPORT_FORMATS (the run: see `results_for_run`)."""
    from localeval.report.source import results_for_run

    if report_format not in REPORT_FORMATS:
        raise UsageError(
            f"unknown report format '{report_format}' (use {', '.join(REPORT_FORMATS)})"
        )
    results = results_for_run(run)
    base = results_for_run(baseline) if baseline is not None else None
    if report_format == "html":
        from localeval.report.html import render_html

        return render_html(results, base)
    if report_format == "md":
        from localeval.report.markdown import render_markdown

        return render_markdown(results, base, worst=worst)
    if report_format == "junit":
        from localeval.report.junit import render_junit

        return render_junit(results, samples=junit_samples)
    return json.dumps(results, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def write_report(
    run: str,
    report_format: str,
    output: Path | None = None,
    baseline: str | None = None,
    junit_samples: bool = False,
    worst: int = 5,
) -> None:
    """Render a run's report and write it to `output` (atomically), or to stdout."""
    if output is not None:
        check_writable(output)
    text = render_report(run, report_format, baseline, junit_samples, worst)
    if output is None:
        click.echo(text, nl=False)
        return
    write_text(output, text)
    click.echo(f"Report written to {output}", err=True)


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
    models = load_models_config(models_path)
    cache = open_store() if use_cache else None
    tools = load_tools(models, used, judge_name, embedder_name, cache=cache)
    click.echo(f"Calibrating on {len(rows)} labelled rows: {', '.join(sorted(names))}", err=True)
    progress = Progress(len(rows), "Calibrating", enabled=show_progress)
    try:
        result = calibrate(rows, tools, on_row=lambda _: progress.advance())
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
