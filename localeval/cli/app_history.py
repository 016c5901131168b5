"""The run-history commands' work: listing, showing and comparing runs, reports, the cache.

Library calls plus what they print; cli_history turns errors into messages and exit codes.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from localeval.errors import UsageError
from localeval.report import console, history_text
from localeval.results.contract import check_writable, write_json, write_results
from localeval.results.diff import DEFAULT_MAX_DROP, DEFAULT_TOP, compare_runs
from localeval.results.files import write_text
from localeval.results.gates import GateResult
from localeval.runs.database import default_db_path, open_store
from localeval.runs.history import RunStore
from localeval.runs.resume import header_of, is_run_ref, load_scores


def check_max_drop(max_drop: float) -> None:
    if not 0.0 <= max_drop <= 1.0:
        raise UsageError(f"--max-drop {max_drop:g}: must be between 0 and 1")


def list_runs(db_path: Path | None = None, limit: int = 20) -> str:
    """The newest runs in the history, incomplete ones marked."""
    path = db_path or default_db_path()
    if not path.exists():
        return f"No runs yet: {path} does not exist. `localeval evaluate DATA` records one."
    store = RunStore.open(path)
    try:
        return history_text.runs_table(store.list_runs(limit))
    finally:
        store.close()


def show_run(ref: str, db_path: Path | None = None, output: Path | None = None) -> str:
    """One run: its settings, summary, gates and usage; optionally its results.json again."""
    if output is not None:
        check_writable(output)
    store = _open_existing(db_path)
    try:
        run = store.resolve(ref)
        columns = store.score_columns(run)
        parts = [history_text.run_description(run), console.summary_table(columns.summaries())]
        categories = console.category_tables(columns.summaries_by_category())
        if categories:
            parts.append(categories)
        if run.gates:
            parts.append(console.gates_text([GateResult(**g) for g in run.gates]))
        parts.append(console.usage_text(store.usage(run.id)))
        if output is not None:
            write_results(output, header_of(store, run), store.sample_dicts(run))
            parts.append(f"Results written to {output}")
        return "\n\n".join(parts)
    finally:
        store.close()


def diff_runs(
    base_ref: str,
    new_ref: str,
    db_path: Path | None = None,
    fail_on_regression: bool = False,
    max_drop: float = DEFAULT_MAX_DROP,
    top: int = DEFAULT_TOP,
    output: Path | None = None,
) -> bool:
    """Compare two runs (or results.json files) and print it; False if the regression gate
    was asked for and failed."""
    check_max_drop(max_drop)
    if top < 0:
        raise UsageError(f"--top {top}: must be 0 or more")
    if output is not None:
        check_writable(output)
    needs_db = is_run_ref(base_ref) or is_run_ref(new_ref)
    store = _open_existing(db_path) if needs_db else None
    try:
        comparison = compare_runs(load_scores(base_ref, store), load_scores(new_ref, store), top)
        click.echo(history_text.comparison_text(comparison))
        passed = True
        if fail_on_regression:
            click.echo("\n" + history_text.regression_text(comparison, max_drop))
            passed = not comparison.regressions(max_drop)
        if output is not None:
            write_json(output, comparison.as_dict())
            click.echo(f"Comparison written to {output}")
        return passed
    finally:
        if store is not None:
            store.close()


def _open_existing(db_path: Path | None) -> RunStore:
    path = db_path or default_db_path()
    if not path.exists():
        raise UsageError(
            f"no run history at {path}: `localeval evaluate DATA` creates it "
            "(or give --db PATH / set LOCALEVAL_DB)"
        )
    return RunStore.open(path)


REPORT_FORMATS = ("html", "md", "junit", "json")


def render_report(
    run: str,
    report_format: str,
    baseline: str | None = None,
    junit_samples: bool = False,
    worst: int = 5,
    db_path: Path | None = None,
) -> str:
    """A run's report as text in one of REPORT_FORMATS (the run: see `results_for_run`)."""
    from localeval.runs.sources import results_for_run

    if report_format not in REPORT_FORMATS:
        raise UsageError(
            f"unknown report format '{report_format}' (use {', '.join(REPORT_FORMATS)})"
        )
    results = results_for_run(run, db_path)
    base = results_for_run(baseline, db_path) if baseline is not None else None
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
    db_path: Path | None = None,
) -> None:
    """Render a run's report and write it to `output` (atomically), or to stdout."""
    if output is not None:
        check_writable(output)
    text = render_report(run, report_format, baseline, junit_samples, worst, db_path)
    if output is None:
        click.echo(text, nl=False)
        return
    write_text(output, text)
    click.echo(f"Report written to {output}", err=True)


def describe_cache(db_path: Path | None = None) -> str:
    """What the judge/embedding cache in the database (default: the run history's) holds."""
    from localeval.runs.cache import cache_stats

    stats = cache_stats(open_store(db_path))
    return "\n".join([f"database: {db_path or default_db_path()}", *stats.lines()])


def empty_cache(db_path: Path | None = None) -> str:
    """Delete every cached judge call and embedding."""
    from localeval.runs.cache import clear_cache

    judged, embedded = clear_cache(open_store(db_path))
    return f"Deleted {judged} cached judge calls and {embedded} cached embeddings."
