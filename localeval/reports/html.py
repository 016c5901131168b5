"""The HTML report: one self-contained page to open in a browser, even offline.

No script, font, stylesheet or image is loaded from anywhere: the styles are inline, the
chart is inline SVG, samples expand with <details>, and a Content-Security-Policy forbids
every request. This module picks what the page shows; templates/report.html.j2 writes it,
and every value it writes is escaped whether or not the template asks (templating.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from localeval.reports.decision_text import cost_line, decision_line
from localeval.reports.html_evidence import inputs, metric_details
from localeval.reports.html_style import CONTENT_SECURITY_POLICY, STYLESHEET
from localeval.reports.radar import Series, metrics_chart_svg
from localeval.reports.reliability import reliability_svg
from localeval.reports.templating import render
from localeval.results import view
from localeval.results.calibration import CalibrationStatus, calibration_sentence
from localeval.results.corrected import corrected_line
from localeval.results.diagnosis import diagnosis_lines
from localeval.results.gates import advice
from localeval.results.view import RunView, as_view
from localeval.text import all_gates_pass
from localeval.version import __version__


def render_html(
    results: RunView | Mapping[str, Any], baseline: RunView | Mapping[str, Any] | None = None
) -> str:
    """The whole report page for a run (and a baseline run to compare with)."""
    run = as_view(results)
    base = None if baseline is None else as_view(baseline)
    page = render(
        "report.html.j2",
        run=run,
        base=base,
        title=f"localeval report {run.run_id or ''}".strip(),
        policy=CONTENT_SECURITY_POLICY,
        stylesheet=Markup(STYLESHEET),  # the package's own, with no value from the run
        version=__version__,
        chart=_chart(run, base),
        samples=_samples(run),
        advice=advice,
        all_gates_pass=all_gates_pass,
        calibration_sentence=calibration_sentence,
        category_rows=_category_rows,
        corrected_estimates=lambda r: [
            (m, c.estimate) for m, c in r.corrected.items() if c.estimate is not None
        ],
        corrected_needs=lambda r: [
            corrected_line(m, c, r.run_id, r.planned_samples)
            for m, c in r.corrected.items()
            if c.estimate is None
        ],
        diagnosis_parts=_diagnosis_parts,
        gate_names=lambda gates: [g.metric for g in gates],
        header_rows=_header_rows,
        reliability_figures=_reliability_figures,
    )
    return str(page)


def _header_rows(run: RunView) -> list[tuple[str, Any, str]]:
    """The run's facts as (name, value, model sha256) rows, those without a value left out."""
    rows: list[tuple[str, Any, str]] = [
        ("run", run.run_id, ""),
        ("created", run.created, ""),
        ("dataset", run.dataset, ""),
        ("samples", run.n_samples, ""),
    ]
    for role in ("judge", "embedder"):
        model = run.model(role)
        if model is not None:
            rows.append((role, model.get("name"), view.text(model.get("sha256"))))
    rows.append(("prompt version", run.prompt_version or "none", ""))
    rows.append(("comparison", decision_line(run.run.get("until_decided"), run.n_samples), ""))
    rows.append(("comparison cost", cost_line(run.run.get("until_decided")), ""))
    if run.usage is not None:
        usage = run.usage
        rows.append(
            (
                "judge usage",
                f"{usage.judge_calls} calls ({usage.cached_calls} cached), "
                f"{usage.prompt_tokens} prompt tokens, {usage.generated_tokens} generated, "
                f"{view.fmt(usage.seconds, 1)} s",
                "",
            )
        )
    return [row for row in rows if view.text(row[1]) or row[2]]


def _chart(run: RunView, baseline: RunView | None) -> dict[str, Any]:
    """The metrics chart (run, thresholds, baseline) and its legend's series."""
    metrics = run.metrics
    series = [Series("this run", "run", [run.mean(m) for m in metrics])]
    series.append(Series("gate threshold", "threshold", [run.thresholds.get(m) for m in metrics]))
    if baseline is not None:
        label = f"baseline {baseline.run_id or ''}".strip()
        series.append(Series(label, "baseline", [baseline.mean(m) for m in metrics]))
    return {"svg": metrics_chart_svg(metrics, series), "series": series}


def _reliability_figures(status: CalibrationStatus) -> list[tuple[Markup, str]]:
    """Each map's reliability diagram (measured on rows the map was not fitted on) with
    what it was fitted on, for the maps that recorded one."""
    figures = []
    for kind, entry in sorted(status.maps.items()):
        bins = view.reliability_bins(entry.get("reliability"))
        if bins:
            fitted = view.text(entry.get("fitted_on"))
            svg = reliability_svg(kind, bins, view.number(entry.get("ece")))
            figures.append((svg, f"fitted on {fitted}" if fitted else ""))
    return figures


def _diagnosis_parts(diagnosis: Any) -> tuple[list[str], list[str]]:
    """The diagnosis's paragraphs and its list items."""
    lines = diagnosis_lines(diagnosis)
    items = [line.removeprefix("- ") for line in lines if line.startswith("- ")]
    return [line for line in lines if not line.startswith("- ")], items


def _category_rows(run: RunView) -> list[tuple[str, int, list[tuple[Any, bool, str]]]]:
    """Per category: its size, and per metric (mean, below the gate, n and undefined)."""
    rows = []
    for category, summaries in run.by_category.items():
        sizes = [s.n + s.n_undefined for s in summaries.values()]
        cells = []
        for metric in run.metrics:
            entry = summaries.get(metric)
            mean = None if entry is None else entry.mean
            limit = run.thresholds.get(metric)
            low = mean is not None and limit is not None and mean < limit
            tip = (
                "n = , undefined = "
                if entry is None
                else f"n = {entry.n}, undefined = {entry.n_undefined}"
            )
            cells.append((mean, low, tip))
        rows.append((category, max(sizes, default=0), cells))
    return rows


def _samples(run: RunView) -> list[dict[str, Any]]:
    """The samples worst first, then those with no defined score at all, in file order."""
    ordered = [s.sample for s in run.worst()]
    seen = {id(s) for s in ordered}
    ordered += [s for s in run.samples if id(s) not in seen]
    return [_sample(sample, run.metrics, run.thresholds) for sample in ordered]


def _sample(
    sample: Mapping[str, Any], metrics: list[str], limits: Mapping[str, float]
) -> dict[str, Any]:
    """One sample's score chips (metric, score, below its gate) and its evidence."""
    scores = sample.get("scores", {})
    details = sample.get("details", {})
    details = details if isinstance(details, dict) else {}
    chips = []
    for metric in [*metrics, *(m for m in scores if m not in metrics)]:
        if metric not in scores:
            continue
        score, limit = view.number(scores.get(metric)), limits.get(metric)
        chips.append((metric, score, score is not None and limit is not None and score < limit))
    evidence = [inputs(sample, details)]
    evidence += [metric_details(str(m), d, scores.get(m)) for m, d in details.items()]
    return {
        "id": sample.get("sample_id"),
        "category": sample.get("category"),
        "chips": chips,
        "has_low": any(low for _, _, low in chips),
        "evidence": Markup("").join(evidence),
    }
