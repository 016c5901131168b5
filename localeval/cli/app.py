"""What the CLI commands do, composed from the library; output goes through click.echo."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from localeval.backends import embedder_backend, judge_backend
from localeval.backends.files import sha256_file
from localeval.cli.app_history import check_max_drop
from localeval.cli.progress import Progress
from localeval.config import load_models_config
from localeval.data.criteria import (
    DEFAULT_CRITERIA,
    Criterion,
    criteria_from_options,
    load_criteria_file,
)
from localeval.data.samples import DatasetWarning, load_samples
from localeval.engine.runner import describe_run, order_metrics
from localeval.errors import DatasetError, PromptTooLongError, UsageError
from localeval.metrics import MetricOptions, build_metric, metric_names
from localeval.metrics.rubric import criterion_scores, criterion_summaries
from localeval.pairwise.judge import (
    PairVerdict,
    compare_pair,
    compare_sample,
    load_pairs,
    summarize_verdicts,
    verdicts_to_dict,
)
from localeval.report import console, history_text
from localeval.results.contract import check_writable, write_json, write_results
from localeval.results.diff import DEFAULT_MAX_DROP, compare_runs
from localeval.results.gates import default_thresholds, evaluate_gates, parse_threshold
from localeval.runs.database import open_store
from localeval.runs.history import RunStore
from localeval.runs.resume import (
    RESUME_MATCHING,
    check_resume_target,
    choose_run,
    header_of,
    load_scores,
    record_samples,
    scan_dataset,
    stored_run_scores,
)
from localeval.runs.tools import load_tools


def evaluate_file(
    data: Path,
    metrics: Sequence[str],
    output: Path | None = None,
    threshold_overrides: Sequence[str] = (),
    judge_name: str | None = None,
    embedder_name: str | None = None,
    models_path: str | None = None,
    show_progress: bool = True,
    skip_invalid: bool = False,
    db_path: Path | None = None,
    resume: str | None = None,
    new_run: bool = False,
    baseline: str | None = None,
    max_drop: float = DEFAULT_MAX_DROP,
    use_cache: bool = True,
    criteria_file: Path | None = None,
    criterion_options: Sequence[str] = (),
) -> bool:
    """Evaluate a data file into the run history, print the summary and gates, write results;
    True if all gates (and the regression gate against `baseline`) pass.

    Everything that can be checked without the models (options, the data file, the output
    folder, the database, the baseline, the run to resume) is checked before any model is
    loaded. `resume`: a run id, RESUME_MATCHING, or None to continue an interrupted run of
    the same evaluation if there is one; `new_run` always starts a new run. With
    `skip_invalid`, invalid rows are listed on stderr and in results.json and left out. The
    rubric's criteria come from `criteria_file` or `criterion_options` ("name: description").
    """
    if resume is not None and new_run:
        raise UsageError("--resume and --no-resume contradict each other; give one")
    check_max_drop(max_drop)
    names = order_metrics(metrics)
    options = metric_options(names, criteria_file, criterion_options)
    overrides = dict(parse_threshold(text, metric_names()) for text in threshold_overrides)
    skipped: list[DatasetError] = []

    def skip(error: DatasetError) -> None:
        skipped.append(error)
        click.echo(f"Skipped: {error}", err=True)

    def warn(warning: DatasetWarning) -> None:
        click.echo(f"Warning: {warning}", err=True)

    dataset = scan_dataset(data, skip if skip_invalid else None, warn)
    if output is not None:
        check_writable(output)
    store = RunStore.open(db_path)
    try:
        base = load_scores(baseline, store) if baseline is not None else None
        target = None
        if resume is not None and resume != RESUME_MATCHING:
            target = check_resume_target(store, resume, dataset, names)
        models = load_models_config(models_path)
        loaded = f"Loaded {dataset.n_samples} samples from {data}"
        if skipped:
            loaded += f" ({len(skipped)} invalid rows skipped)"
        click.echo(f"{loaded}; metrics: {', '.join(names)}", err=True)
        metric_objects = [build_metric(n, options) for n in names]
        judged = {m.name for m in metric_objects if m.uses_judge}
        judge_config = models.judge(judge_name) if judged else None
        judge_thresholds = judge_config.thresholds if judge_config else {}
        thresholds = default_thresholds(judged, judge_thresholds) | overrides
        from_judge = sorted(m for m in judged & set(judge_thresholds) if m not in overrides)
        # the judge/embedding cache lives in the same database as the run history
        cache = store.connection if use_cache else None
        tools = load_tools(models, metric_objects, judge_name, embedder_name, cache=cache)
        info = describe_run(metric_objects, tools, str(data), dataset.sha256)
        info.skipped_rows = [skipped_row(error) for error in skipped]
        run = choose_run(store, info, dataset.n_samples, thresholds, resume, new_run, target)
        record_samples(store, run, data, metric_objects, tools, show_progress, skip_invalid)
        if sha256_file(data) != dataset.sha256:
            raise UsageError(
                f"{data} changed while it was being evaluated; the run is not complete "
                "(evaluate it again with --no-resume)"
            )

        columns = store.score_columns(run)
        summaries = columns.summaries()
        criteria = (options.rubric_criteria or DEFAULT_CRITERIA) if "rubric" in names else ()
        if criteria:
            # each rubric criterion is summarised like a metric of its own ("rubric.accuracy")
            details = (s["details"].get("rubric", {}) for s in store.sample_dicts(run))
            summaries.update(criterion_summaries(details, criteria))
        gates = evaluate_gates(summaries, thresholds)
        run = store.complete(run.id, gates)
        click.echo(console.summary_table(summaries))
        categories = console.category_tables(columns.summaries_by_category())
        if categories:
            click.echo("\n" + categories)
        if gates:
            judge_used = judge_config.name if judge_config else None
            click.echo("\n" + console.gates_text(gates, from_judge, judge_used))
        click.echo("\n" + console.usage_text(store.usage(run.id)))
        if output is not None:
            try:
                header = header_of(store, run)
                samples = store.sample_dicts(run)
                if criteria:
                    header["summary"] = {m: s.as_dict() for m, s in summaries.items()}
                    samples = with_criterion_scores(samples, criteria)
                write_results(output, header, samples)
            except UsageError as exc:
                raise UsageError(
                    f"{exc}. The run is saved: `localeval runs show {run.id} -o PATH` writes "
                    "its results again"
                ) from None
            click.echo(f"Results written to {output}")
        click.echo(f"Run {run.id} saved in {store.path}")
        passed = all(g.passed for g in gates)
        if base is not None:
            comparison = compare_runs(base, stored_run_scores(store, run, run.id))
            click.echo("\n" + history_text.comparison_text(comparison))
            click.echo("\n" + history_text.regression_text(comparison, max_drop))
            passed = passed and not comparison.regressions(max_drop)
        return passed
    finally:
        store.close()


def skipped_row(error: DatasetError) -> dict[str, object]:
    """A row --skip-invalid left out, as results.json lists it."""
    return {"file": error.path, "line": error.line, "field": error.field, "reason": error.detail}


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


def with_criterion_scores(
    samples: Iterator[dict[str, Any]], criteria: Sequence[Criterion]
) -> Iterator[dict[str, Any]]:
    """results.json samples with each rubric criterion's normalised score among `scores`."""
    for sample in samples:
        sample["scores"].update(criterion_scores(sample["details"].get("rubric", {}), criteria))
        yield sample


def describe_models(models_path: str | None = None) -> str:
    """A listing of the configured models: name, default marker, status and location."""
    models = load_models_config(models_path)
    lines = [f"models file: {models.source}", "", "judges:"]
    for name, judge in models.judges.items():
        found = judge_backend(judge.backend).status(judge.settings)
        status = "ok" if found.problem is None else f"PROBLEM: {found.problem}"
        mark = "*" if name == models.default_judge else " "
        lines.append(f" {mark} {name:<24} {status:<10} {found.location}  ({found.note})")
        if judge.thresholds:
            gates = ", ".join(f"{m} >= {v:.2f}" for m, v in judge.thresholds.items())
            lines.append(f"   {'':<24} gates on its scale: {gates}")
    lines += ["", "embedders:"]
    for name, embedder in models.embedders.items():
        found = embedder_backend(embedder.backend).status(embedder.settings)
        status = "ok" if found.problem is None else f"PROBLEM: {found.problem}"
        mark = "*" if name == models.default_embedder else " "
        lines.append(f" {mark} {name:<24} {status:<10} {found.location}  ({found.note})")
    lines += ["", "* = default. Missing files: run scripts/setup.sh."]
    return "\n".join(lines)


def calibrate_files(
    paths: Sequence[Path],
    output: Path | None = None,
    limit: int | None = None,
    judge_name: str | None = None,
    embedder_name: str | None = None,
    models_path: str | None = None,
    show_progress: bool = True,
    use_cache: bool = True,
    db_path: Path | None = None,
) -> None:
    """Measure agreement between metric scores and the labels of labelled files."""
    from localeval.calibration.agreement import (
        PAIRWISE,
        SCORED_AS,
        calibrate,
        format_table,
        label_of,
        metric_of,
        suggested_thresholds,
        thresholds_snippet,
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
    cache = open_store(db_path) if use_cache else None
    tools = load_tools(models, used, judge_name, embedder_name, cache=cache)
    click.echo(f"Calibrating on {len(rows)} labelled rows: {', '.join(sorted(names))}", err=True)
    progress = Progress(len(rows), "Calibrating", enabled=show_progress)
    try:
        result = calibrate(rows, tools, compare=compare_sample, on_row=lambda _: progress.advance())
    finally:
        progress.close()
    click.echo(format_table(result))
    judge = tools.judge
    suggested = suggested_thresholds(result)
    if judge is not None and suggested:
        click.echo("\n" + thresholds_snippet(judge.name, suggested))
    if judge is not None:
        click.echo("\n" + console.usage_text(judge.usage))
    if output is not None:
        write_json(
            output,
            {
                "judge": judge.identity.record(with_settings=False) if judge else None,
                "agreements": [a.as_dict() for a in result.agreements],
                "suggested_thresholds": suggested,
                "counts": [
                    {"dataset": d, "metric": m, **c} for (d, m), c in result.counts().items()
                ],
                "rows": [vars(r) for r in result.rows],
            },
        )
        click.echo(f"Calibration written to {output}")


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
    db_path: Path | None = None,
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
    cache = open_store(db_path) if use_cache else None
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
        write_json(output, verdicts_to_dict(str(data), tools, rows, verdicts, summary, usage))
        click.echo(f"Verdicts written to {output}")
    return not gate_failed
