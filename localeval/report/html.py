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
from localeval.results.calibration import calibration_sentence
from localeval.results.corrected import corrected_line
from localeval.results.diagnosis import diagnosis_lines
from localeval.results.gates import CORRECTED, advice
from localeval.results.view import RunView, as_view


def render_html(
    results: RunView | Mapping[str, Any], baseline: RunView | Mapping[str, Any] | None = None
) -> str:
    """The whole report page for a run (and a baseline run to compare with)."""
    run = as_view(results)
    base = None if baseline is None else as_view(baseline)
    title = f"localeval report {run.run_id or ''}".strip()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{e(CONTENT_SECURITY_POLICY)}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title>",
        f"<style>{STYLESHEET}</style>",
        "</head><body><main>",
        _header(run),
        _overview(run, base),
        _calibration(run),
        _diagnosis(run),
        _categories(run),
        _samples(run),
        f"<footer>Written by localeval {e(__version__)}. This page loads nothing from the "
        "network; it can be mailed or archived as one file.</footer>",
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _header(run: RunView) -> str:
    gates, failed = run.gates, run.failed_gates
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
        ("run", e(run.run_id)),
        ("created", e(run.created)),
        ("dataset", e(run.dataset)),
        ("samples", e(run.n_samples)),
    ]
    for role in ("judge", "embedder"):
        model = run.model(role)
        if model is not None:
            sha = view.text(model.get("sha256"))
            rows.append(
                (
                    role,
                    e(model.get("name"))
                    + (f" <span class='muted'>sha256 {e(sha[:12])}…</span>" if sha else ""),
                )
            )
    rows.append(("prompt version", e(run.prompt_version or "none")))
    if run.usage is not None:
        usage = run.usage
        rows.append(
            (
                "judge usage",
                e(
                    f"{usage.judge_calls} calls ({usage.cached_calls} cached), "
                    f"{usage.prompt_tokens} prompt tokens, {usage.generated_tokens} generated, "
                    f"{view.fmt(usage.seconds, 1)} s"
                ),
            )
        )
    items = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows if v)
    return f"<header><h1>RAG evaluation report</h1>{verdict}<dl class='run'>{items}</dl></header>"


def _overview(run: RunView, baseline: RunView | None) -> str:
    metrics = run.metrics
    series = [Series("this run", "run", [run.mean(m) for m in metrics])]
    series.append(Series("gate threshold", "threshold", [run.thresholds.get(m) for m in metrics]))
    if baseline is not None:
        label = f"baseline {baseline.run_id or ''}".strip()
        series.append(Series(label, "baseline", [baseline.mean(m) for m in metrics]))
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
        f"{_gates_list(run)}</div></section>"
        f"<section><h2>Summary</h2>{_summary_table(run, baseline)}</section>"
    )


def _calibration(run: RunView) -> str:
    """Whether the scores are calibrated, with each map's reliability diagram (measured on
    rows the map was not fitted on) when the run recorded one."""
    status = run.calibration
    if status is None:
        return ""
    figures = []
    for kind, entry in sorted(status.maps.items()):
        bins = view.reliability_bins(entry.get("reliability"))
        if bins:
            ece = view.number(entry.get("ece"))
            fitted = view.text(entry.get("fitted_on"))
            caption = f"fitted on {fitted}" if fitted else ""
            figures.append(
                f'<figure class="panel">{reliability_svg(kind, bins, ece)}'
                f"<figcaption class='muted'>{e(caption)}</figcaption></figure>"
            )
    # what a reader can act on first: the means people would give, or how to get them; the
    # judge's own scale below it, as a note rather than an alarm
    return (
        f"<section><h2>Calibration</h2>{_corrected(run)}"
        f"<p class='muted'>{e(calibration_sentence(status))}</p>"
        + (f'<div class="overview">{"".join(figures)}</div>' if figures else "")
        + "</section>"
    )


def _corrected(run: RunView) -> str:
    """The means corrected by people's labels, beside the judge's own and the labels'
    alone, in a table; for a metric without enough labels, how many more and how."""
    if not run.corrected:
        return ""
    rows, needs = [], []
    for metric, entry in run.corrected.items():
        found = entry.estimate
        if found is None:
            needs.append(f"<li>{e(corrected_line(metric, entry, run.run_id))}</li>")
            continue
        low, high = found.ci95
        only_low, only_high = found.labels_only_ci95
        rows.append(
            f"<tr><td>{e(metric)}</td><td>{found.mean:.3f}</td><td>[{low:.3f}, {high:.3f}]"
            f"</td><td>{found.judge_mean:.3f}</td><td>{found.n_labelled}</td>"
            f"<td>{found.labels_only_mean:.3f} [{only_low:.3f}, {only_high:.3f}]</td></tr>"
        )
    table = (
        "<table class='corrected'><thead><tr><th>metric</th><th>mean people would give</th>"
        "<th>95% CI</th><th>judge's mean</th><th>labelled samples</th><th>labels alone</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else ""
    )
    listed = f"<ul class='corrected-needs'>{''.join(needs)}</ul>" if needs else ""
    return f"<h3>Corrected by people's labels</h3>{table}{listed}"


def _diagnosis(run: RunView) -> str:
    """Which part of the pipeline failed, when the run was diagnosed."""
    if run.diagnosis is None:
        return ""
    lines = diagnosis_lines(run.diagnosis)
    items = "".join(
        f"<li>{e(line.removeprefix('- '))}</li>" for line in lines if line.startswith("- ")
    )
    text = "".join(f"<p>{e(line)}</p>" for line in lines if not line.startswith("- "))
    return (
        "<section><h2>Diagnosis</h2><p class='muted'>answer_correctness --diagnose: each "
        "statement of the answers and references judged against each retrieved chunk.</p>"
        f"{text}{f'<ul>{items}</ul>' if items else ''}</section>"
    )


def _gates_list(run: RunView) -> str:
    if not run.gates:
        return '<p class="muted">No metric of this run has a threshold.</p>'
    items = []
    for gate in run.gates:
        status = "pass" if gate.passed else "fail"
        line = (
            f'<span class="badge {status}">{status.upper()}</span><b>{e(gate.metric)}</b> = '
            f"{view.fmt(gate.value)} {'≥' if gate.passed else '<'} {gate.threshold:.2f}"
        )
        if gate.reads == CORRECTED or gate.needed:
            # what the gate read: the mean corrected by labels, or why it had none
            line += f'<p class="remedy">{e(gate.read_as().strip(" ()") or gate.title())}.</p>'

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


def _summary_table(run: RunView, baseline: RunView | None) -> str:
    head = "<th>metric</th><th>mean</th><th>95% CI</th><th>n</th><th>undefined</th><th>gate</th>"
    if baseline is not None:
        head += "<th>baseline</th><th>Δ</th>"
    rows = []
    for row in run.summary_rows(baseline):
        summary = row.summary
        ci = None if summary is None else summary.ci95
        ci_text = "-" if ci is None else f"{view.fmt(ci[0])} – {view.fmt(ci[1])}"
        cells = [
            f"<td>{e(row.metric)}</td>",
            f'<td class="num{" low" if row.below else ""}">{view.fmt(row.mean)}</td>',
            f'<td class="num">{e(ci_text)}</td>',
            f'<td class="num">{e(None if summary is None else summary.n)}</td>',
            f'<td class="num">{e(None if summary is None else summary.n_undefined)}</td>',
            f'<td class="num">{"-" if row.threshold is None else f"≥ {row.threshold:.2f}"}</td>',
        ]
        if baseline is not None:
            delta = "-" if row.delta is None else f"{row.delta:+.3f}"
            cells += [
                f'<td class="num">{view.fmt(row.baseline)}</td>',
                f'<td class="num">{delta}</td>',
            ]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    note = (
        '<p class="muted">Δ is a difference of means; whether it is more than judge noise '
        "needs the paired comparison of the two runs.</p>"
        if baseline is not None
        else ""
    )
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(rows)}</table></div>{note}'


def _categories(run: RunView) -> str:
    if len(run.by_category) < 2:
        return ""
    metrics = run.metrics
    head = "<th>category</th><th>samples</th>" + "".join(f"<th>{e(m)}</th>" for m in metrics)
    rows = []
    for category, summaries in run.by_category.items():
        sizes = [s.n + s.n_undefined for s in summaries.values()]
        cells = [f"<td>{e(category)}</td>", f'<td class="num">{max(sizes, default=0)}</td>']
        for metric in metrics:
            entry = summaries.get(metric)
            mean = None if entry is None else entry.mean
            limit = run.thresholds.get(metric)
            low = mean is not None and limit is not None and mean < limit
            tip = (
                "n = , undefined = "
                if entry is None
                else (f"n = {entry.n}, undefined = {entry.n_undefined}")
            )
            cells.append(
                f'<td class="num{" low" if low else ""}" title="{e(tip)}">{view.fmt(mean)}</td>'
            )
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        "<section><h2>By category</h2><p class='muted'>Means per category; red: below the "
        f"metric's gate.</p><div class='scroll'><table><tr>{head}</tr>{''.join(rows)}</table>"
        "</div></section>"
    )


def _samples(run: RunView) -> str:
    ordered = [s.sample for s in run.worst()]
    seen = {id(s) for s in ordered}
    # samples with no defined score at all go last, in file order
    ordered += [s for s in run.samples if id(s) not in seen]
    blocks = [_sample(sample, run.metrics, run.thresholds) for sample in ordered]
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
