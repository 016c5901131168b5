"""The HTML report: one self-contained page to open in a browser, even offline.

No script, font, stylesheet or image is loaded from anywhere: the styles are inline, the
chart is inline SVG, samples expand with <details>, and a Content-Security-Policy forbids
every request. Every string that comes from the results file is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localeval import __version__
from localeval.report.html_evidence import e, inputs, metric_details
from localeval.report.html_style import CONTENT_SECURITY_POLICY, STYLESHEET
from localeval.report.radar import Series, metrics_chart_svg
from localeval.report.reliability import reliability_svg
from localeval.results import view
from localeval.results.calibration import calibration_sentence, calibration_status
from localeval.results.diagnosis import diagnosis_lines, run_diagnosis
from localeval.results.gates import advice


def render_html(results: Mapping[str, Any], baseline: Mapping[str, Any] | None = None) -> str:
    """The whole report page for a results dict (and a baseline run's to compare with)."""
    run = results.get("run", {})
    title = f"localeval report {view.text(run.get('id'))}".strip()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{e(CONTENT_SECURITY_POLICY)}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title>",
        f"<style>{STYLESHEET}</style>",
        "</head><body><main>",
        _header(results),
        _overview(results, baseline),
        _calibration(results),
        _diagnosis(results),
        _categories(results),
        _samples(results),
        f"<footer>Written by localeval {e(__version__)}. This page loads nothing from the "
        "network; it can be mailed or archived as one file.</footer>",
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _header(results: Mapping[str, Any]) -> str:
    run = results.get("run", {})
    gates = view.gate_results(results)
    failed = [g for g in gates if not g.passed]
    if not gates:
        verdict = '<p class="verdict pass">No quality gate applies to these metrics</p>'
    elif failed:
        verdict = (
            f'<p class="verdict fail">{len(failed)} of {len(gates)} quality gates failed: '
            f"{e(', '.join(g.metric for g in failed))}</p>"
        )
    else:
        verdict = f'<p class="verdict pass">All {len(gates)} quality gates pass</p>'
    rows: list[tuple[str, str]] = [
        ("run", e(run.get("id"))),
        ("created", e(run.get("created"))),
        ("dataset", e(run.get("dataset"))),
        ("samples", e(len(results.get("samples", [])))),
    ]
    for role in ("judge", "embedder"):
        model = run.get(role)
        if isinstance(model, dict):
            sha = view.text(model.get("sha256"))
            rows.append(
                (
                    role,
                    e(model.get("name"))
                    + (f" <span class='muted'>sha256 {e(sha[:12])}…</span>" if sha else ""),
                )
            )
    rows.append(("prompt version", e(run.get("prompt_version") or "none")))
    usage = run.get("usage")
    if isinstance(usage, dict):
        rows.append(
            (
                "judge usage",
                e(
                    f"{view.text(usage.get('judge_calls'))} calls "
                    f"({view.text(usage.get('cached_calls'))} cached), "
                    f"{view.text(usage.get('prompt_tokens'))} prompt tokens, "
                    f"{view.text(usage.get('generated_tokens'))} generated, "
                    f"{view.fmt(usage.get('seconds'), 1)} s"
                ),
            )
        )
    items = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows if v)
    return f"<header><h1>RAG evaluation report</h1>{verdict}<dl class='run'>{items}</dl></header>"


def _overview(results: Mapping[str, Any], baseline: Mapping[str, Any] | None) -> str:
    metrics = view.metric_names(results)
    limits = view.thresholds(results)
    series = [Series("this run", "run", [view.summary_mean(results, m) for m in metrics])]
    series.append(Series("gate threshold", "threshold", [limits.get(m) for m in metrics]))
    if baseline is not None:
        label = f"baseline {view.text(baseline.get('run', {}).get('id'))}".strip()
        series.append(Series(label, "baseline", [view.summary_mean(baseline, m) for m in metrics]))
    chart = metrics_chart_svg(metrics, series)
    legend = "".join(f'<span class="{s.kind}">{e(s.label)}</span>' for s in series)
    figure = (
        f'<figure class="panel chart-panel">{chart}<figcaption class="legend">{legend}'
        "</figcaption></figure>"
        if chart
        else ""
    )
    return (
        f'<section class="overview">{figure}<div class="panel gates"><h2>Quality gates</h2>'
        f"{_gates_list(results)}</div></section>"
        f"<section><h2>Summary</h2>{_summary_table(results, baseline)}</section>"
    )


def _calibration(results: Mapping[str, Any]) -> str:
    """Whether the scores are calibrated, with each map's reliability diagram (measured on
    rows the map was not fitted on) when the run recorded one."""
    run = results.get("run", {})
    judge = run.get("judge") if isinstance(run, Mapping) else None
    metrics = view.metric_names(results)
    status = calibration_status(
        judge if isinstance(judge, Mapping) else None, metrics, view.metric_settings(results)
    )
    if status is None:
        return ""
    figures = []
    for kind, entry in sorted(status.maps.items()):
        bins = view.reliability_bins(entry.get("reliability"))
        if bins:
            ece = entry.get("ece")
            ece = float(ece) if isinstance(ece, int | float) and not isinstance(ece, bool) else None
            fitted = view.text(entry.get("fitted_on"))
            caption = f"fitted on {fitted}" if fitted else ""
            figures.append(
                f'<figure class="panel">{reliability_svg(kind, bins, ece)}'
                f"<figcaption class='muted'>{e(caption)}</figcaption></figure>"
            )
    note = "low" if status.uncalibrated else "muted"
    return (
        f"<section><h2>Calibration</h2><p class='{note}'>{e(calibration_sentence(status))}</p>"
        + (f'<div class="overview">{"".join(figures)}</div>' if figures else "")
        + "</section>"
    )


def _diagnosis(results: Mapping[str, Any]) -> str:
    """Which part of the pipeline failed, when the run was diagnosed."""
    found = run_diagnosis(view.sample_details(results))
    if found is None:
        return ""
    lines = diagnosis_lines(found)
    items = "".join(
        f"<li>{e(line.removeprefix('- '))}</li>" for line in lines if line.startswith("- ")
    )
    text = "".join(f"<p>{e(line)}</p>" for line in lines if not line.startswith("- "))
    return (
        "<section><h2>Diagnosis</h2><p class='muted'>answer_correctness --diagnose: each "
        "statement of the answers and references judged against each retrieved chunk.</p>"
        f"{text}{f'<ul>{items}</ul>' if items else ''}</section>"
    )


def _gates_list(results: Mapping[str, Any]) -> str:
    gates = view.gate_results(results)
    if not gates:
        return '<p class="muted">No metric of this run has a threshold.</p>'
    items = []
    for gate in gates:
        status = "pass" if gate.passed else "fail"
        line = (
            f'<span class="badge {status}">{status.upper()}</span><b>{e(gate.metric)}</b> = '
            f"{view.fmt(gate.value)} {'≥' if gate.passed else '<'} {gate.threshold:.2f}"
        )
        found = None if gate.passed or gate.too_few_defined else advice(gate.metric)
        if gate.too_few_defined:
            line += f'<p class="remedy">{e(gate.title())}.</p>'
        elif found:
            cause, remedies = found
            line += (
                f'<p class="remedy">Likely cause: {e(cause)}. Try: {e("; ".join(remedies))}.</p>'
            )
        items.append(f"<li>{line}</li>")
    return f'<ul class="gates-list">{"".join(items)}</ul>'


def _summary_table(results: Mapping[str, Any], baseline: Mapping[str, Any] | None) -> str:
    limits = view.thresholds(results)
    head = "<th>metric</th><th>mean</th><th>95% CI</th><th>n</th><th>undefined</th><th>gate</th>"
    if baseline is not None:
        head += "<th>baseline</th><th>Δ</th>"
    rows = []
    for metric in view.metric_names(results):
        entry = results.get("summary", {}).get(metric)
        entry = entry if isinstance(entry, dict) else {}
        mean = view.number(entry.get("mean"))
        limit = limits.get(metric)
        low = mean is None or (limit is not None and mean < limit)
        ci = entry.get("ci95")
        ci_text = (
            f"{view.fmt(ci[0])} – {view.fmt(ci[1])}"
            if isinstance(ci, list) and len(ci) == 2
            else "-"
        )
        cells = [
            f"<td>{e(metric)}</td>",
            f'<td class="num{" low" if low and limit is not None else ""}">{view.fmt(mean)}</td>',
            f'<td class="num">{e(ci_text)}</td>',
            f'<td class="num">{e(entry.get("n"))}</td>',
            f'<td class="num">{e(entry.get("n_undefined"))}</td>',
            f'<td class="num">{"-" if limit is None else f"≥ {limit:.2f}"}</td>',
        ]
        if baseline is not None:
            before = view.summary_mean(baseline, metric)
            delta = "-" if mean is None or before is None else f"{mean - before:+.3f}"
            cells += [f'<td class="num">{view.fmt(before)}</td>', f'<td class="num">{delta}</td>']
        rows.append(f"<tr>{''.join(cells)}</tr>")
    note = (
        '<p class="muted">Δ is a difference of means; whether it is more than judge noise '
        "needs the paired comparison of the two runs.</p>"
        if baseline is not None
        else ""
    )
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(rows)}</table></div>{note}'


def _categories(results: Mapping[str, Any]) -> str:
    by_category = view.category_summaries(results)
    if len(by_category) < 2:
        return ""
    metrics = view.metric_names(results)
    limits = view.thresholds(results)
    head = "<th>category</th><th>samples</th>" + "".join(f"<th>{e(m)}</th>" for m in metrics)
    rows = []
    for category, summaries in by_category.items():
        sizes = [
            (view.number(s.get("n")) or 0) + (view.number(s.get("n_undefined")) or 0)
            for s in summaries.values()
        ]
        cells = [f"<td>{e(category)}</td>", f'<td class="num">{int(max(sizes, default=0))}</td>']
        for metric in metrics:
            entry = summaries.get(metric, {})
            mean = view.number(entry.get("mean"))
            limit = limits.get(metric)
            low = mean is not None and limit is not None and mean < limit
            tip = f"n = {view.text(entry.get('n'))}, undefined = "
            tip += view.text(entry.get("n_undefined"))
            cells.append(
                f'<td class="num{" low" if low else ""}" title="{e(tip)}">{view.fmt(mean)}</td>'
            )
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        "<section><h2>By category</h2><p class='muted'>Means per category; red: below the "
        f"metric's gate.</p><div class='scroll'><table><tr>{head}</tr>{''.join(rows)}</table>"
        "</div></section>"
    )


def _samples(results: Mapping[str, Any]) -> str:
    limits = view.thresholds(results)
    metrics = view.metric_names(results)
    ordered = [s.sample for s in view.worst_samples(results)]
    seen = {id(s) for s in ordered}
    # samples with no defined score at all go last, in file order
    ordered += [s for s in results.get("samples", []) if id(s) not in seen]
    blocks = [_sample(sample, metrics, limits) for sample in ordered]
    return (
        "<section><h2>Samples</h2><p class='muted'>Worst first (by the score furthest below "
        "its gate). Click a sample to see its evidence: unsupported statements are "
        "highlighted, chunks judged not useful are greyed.</p>"
        '<input type="checkbox" id="only-low"> <label class="filter" for="only-low">show only '
        "samples with a score below its gate</label>"
        f'<div class="samples">{"".join(blocks)}</div></section>'
    )


def _sample(sample: Mapping[str, Any], metrics: list[str], limits: Mapping[str, float]) -> str:
    scores = sample.get("scores", {})
    details = sample.get("details", {})
    details = details if isinstance(details, dict) else {}
    chips, has_low = [], False
    for metric in [*metrics, *(m for m in scores if m not in metrics)]:
        if metric not in scores:
            continue
        score = view.number(scores.get(metric))
        limit = limits.get(metric)
        if score is None:
            chips.append(f'<span class="chip undefined">{e(metric)} undefined</span>')
            continue
        low = limit is not None and score < limit
        has_low = has_low or low
        chips.append(f'<span class="chip{" low" if low else ""}">{e(metric)} {score:.2f}</span>')
    category = sample.get("category")
    summary = (
        f'<summary><span class="sid">{e(sample.get("sample_id"))}</span>'
        + (f'<span class="cat">{e(category)}</span>' if category else "")
        + "".join(chips)
        + "</summary>"
    )
    body = [inputs(sample, details)]
    for metric, detail in details.items():
        body.append(metric_details(str(metric), detail, scores.get(metric)))
    css = "sample has-low" if has_low else "sample"
    body_html = "".join(body)
    return f'<details class="{css}">{summary}<div class="sample-body">{body_html}</div></details>'
