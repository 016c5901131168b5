"""The metrics chart of the HTML report, as inline SVG (no script, no external resource).

Three or more metrics are drawn as a radar: one axis per metric from 0 (centre) to 1 (rim),
with the run's means, the gate thresholds and, when given, a baseline run's means as
polygons. A radar of one or two axes is a point or a line, so with fewer than three
metrics the same series are drawn as horizontal bars with the threshold as a tick.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from localeval.report.templating import escaped as e

#: polygon/bar styles by series kind; the report's stylesheet has the legend swatches
STYLES: dict[str, str] = {
    "run": 'fill="#2563eb" fill-opacity="0.22" stroke="#1d4ed8" stroke-width="2.5"',
    "threshold": 'fill="none" stroke="#dc2626" stroke-width="2" stroke-dasharray="6 4"',
    "baseline": 'fill="none" stroke="#6b7280" stroke-width="2" stroke-dasharray="2 3"',
}
BAR_FILL = {"run": "#2563eb", "baseline": "#9ca3af"}


@dataclass(frozen=True)
class Series:
    """One line of the chart: a value in [0, 1] per metric, None where there is none."""

    label: str
    kind: str  # "run", "threshold" or "baseline"
    values: Sequence[float | None]


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def metrics_chart_svg(metrics: Sequence[str], series: Sequence[Series]) -> str:
    """The chart for these metrics: a radar for three or more, bars for one or two."""
    if not metrics:
        return ""
    for line in series:
        if len(line.values) != len(metrics):
            raise ValueError(f"series {line.label!r} has {len(line.values)} values")
        if line.kind not in STYLES:
            raise ValueError(f"unknown series kind {line.kind!r}")
    if len(metrics) >= 3:
        return radar_svg(metrics, series)
    return bars_svg(metrics, series)


def _aria_label(metrics: Sequence[str], series: Sequence[Series]) -> str:
    parts = []
    for line in series:
        values = ", ".join(f"{m} {_fmt(v)}" for m, v in zip(metrics, line.values, strict=True))
        parts.append(f"{line.label}: {values}")
    return "; ".join(parts)


def radar_svg(metrics: Sequence[str], series: Sequence[Series]) -> str:
    """A radar chart: axis i points up-and-clockwise from 12 o'clock; the rim is 1.0."""
    radius, label_room = 130.0, 150.0
    width, height = 2 * (radius + label_room), 2 * radius + 90.0
    cx, cy = width / 2, radius + 45.0
    count = len(metrics)

    def point(index: int, value: float) -> tuple[float, float]:
        angle = -math.pi / 2 + 2 * math.pi * index / count
        r = radius * _clip(value)
        return cx + r * math.cos(angle), cy + r * math.sin(angle)

    def polygon(values: Sequence[float]) -> str:
        return " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, v) for i, v in enumerate(values)))

    parts = [
        f'<svg class="chart radar" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        f'aria-label="{e(_aria_label(metrics, series))}">',
        "<title>Metric means against their thresholds</title>",
    ]
    # grid: rings at quarter steps, one spoke per metric
    for ring in (0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<polygon points="{polygon([ring] * count)}" fill="none" stroke="#d1d5db" '
            f'stroke-width="1"/>'
        )
        x, y = point(0, ring)
        parts.append(
            f'<text x="{x + 4:.1f}" y="{y + 4:.1f}" font-size="10" fill="#6b7280" '
            f'stroke="#fff" stroke-width="3" paint-order="stroke">{ring:.2f}</text>'
        )
    for index in range(count):
        x, y = point(index, 1.0)
        parts.append(
            f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y:.1f}" stroke="#d1d5db"/>'
        )
    # series: thresholds and baseline under the run, so the run's fill does not hide them
    order = {"threshold": 0, "baseline": 1, "run": 2}
    for line in sorted(series, key=lambda s: order[s.kind]):
        if line.kind != "run" and any(v is None for v in line.values):
            parts.append(_axis_ticks(line, point, count))
            continue
        values = [0.0 if v is None else v for v in line.values]
        parts.append(
            f'<polygon class="series-{line.kind}" points="{polygon(values)}" '
            f"{STYLES[line.kind]}><title>{e(line.label)}</title></polygon>"
        )
        if line.kind == "run":
            for index, value in enumerate(values):
                x, y = point(index, value)
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#1d4ed8"/>')
    parts += _radar_labels(metrics, series, (cx, cy), radius)
    parts.append("</svg>")
    return "".join(parts)


def _radar_labels(
    metrics: Sequence[str], series: Sequence[Series], centre: tuple[float, float], radius: float
) -> list[str]:
    """Beside each axis the metric, then the run's value against the threshold."""
    cx, cy = centre
    count = len(metrics)
    parts = []
    run = next((s for s in series if s.kind == "run"), None)
    threshold = next((s for s in series if s.kind == "threshold"), None)
    for index, metric in enumerate(metrics):
        angle = -math.pi / 2 + 2 * math.pi * index / count
        x = cx + (radius + 14) * math.cos(angle)
        y = cy + (radius + 14) * math.sin(angle)
        cos = math.cos(angle)
        anchor = "middle" if abs(cos) < 0.3 else ("start" if cos > 0 else "end")
        if math.sin(angle) < -0.7:
            y -= 14  # the top label sits above the rim
        elif math.sin(angle) > 0.7:
            y += 8
        detail = ""
        if run is not None:
            detail = _fmt(run.values[index])
            if threshold is not None and threshold.values[index] is not None:
                detail += f" (gate {_fmt(threshold.values[index])})"
        parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="13" '
            f'font-weight="600" fill="#111827">{e(metric)}'
            f'<tspan x="{x:.1f}" dy="16" font-size="12" font-weight="400" '
            f'fill="#374151">{e(detail)}</tspan></text>'
        )
    return parts


def _axis_ticks(
    line: Series, point: Callable[[int, float], tuple[float, float]], count: int
) -> str:
    """A series with gaps (a metric without a gate, or missing from the baseline) as a short
    tick across each axis it has a value on: a polygon through 0 would misstate it."""
    ticks = []
    for index, value in enumerate(line.values):
        if value is None:
            continue
        angle = -math.pi / 2 + 2 * math.pi * index / count
        x, y = point(index, value)
        dx, dy = -math.sin(angle) * 9, math.cos(angle) * 9
        ticks.append(
            f'<line class="series-{line.kind}" x1="{x - dx:.1f}" y1="{y - dy:.1f}" '
            f'x2="{x + dx:.1f}" y2="{y + dy:.1f}" {STYLES[line.kind].replace("6 4", "3 2")}>'
            f"<title>{e(line.label)}: {_fmt(value)}</title></line>"
        )
    return "".join(ticks)


def bars_svg(metrics: Sequence[str], series: Sequence[Series]) -> str:
    """Horizontal bars per metric (run, then baseline), the threshold as a red tick."""
    left, track, right = 150.0, 300.0, 110.0
    bars = [s for s in series if s.kind != "threshold"]
    threshold = next((s for s in series if s.kind == "threshold"), None)
    bar_height, gap = 16.0, 26.0
    block = len(bars) * (bar_height + 4) + gap
    width = left + track + right
    height = 30 + block * len(metrics)
    parts = [
        f'<svg class="chart bars" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        f'aria-label="{e(_aria_label(metrics, series))}">',
        "<title>Metric means against their thresholds</title>",
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = left + track * tick
        parts.append(
            f'<line x1="{x:.1f}" y1="10" x2="{x:.1f}" y2="{height - 14:.1f}" stroke="#e5e7eb"/>'
            f'<text x="{x:.1f}" y="{height - 2:.1f}" text-anchor="middle" font-size="10" '
            f'fill="#6b7280">{tick:.2f}</text>'
        )
    for index, metric in enumerate(metrics):
        top = 12 + index * block
        parts.append(
            f'<text x="{left - 8:.1f}" y="{top + bar_height - 3:.1f}" text-anchor="end" '
            f'font-size="13" font-weight="600" fill="#111827">{e(metric)}</text>'
        )
        for row, line in enumerate(bars):
            y = top + row * (bar_height + 4)
            value = line.values[index]
            length = track * _clip(value or 0.0)
            note = _fmt(value)
            if line.kind == "run" and threshold is not None:
                note += f" (gate {_fmt(threshold.values[index])})"
            parts.append(
                f'<rect class="series-{line.kind}" x="{left:.1f}" y="{y:.1f}" '
                f'width="{length:.1f}" height="{bar_height:.1f}" fill="{BAR_FILL[line.kind]}">'
                f"<title>{e(line.label)}: {_fmt(value)}</title></rect>"
                f'<text x="{left + track + 8:.1f}" y="{y + bar_height - 3:.1f}" font-size="12" '
                f'fill="#374151">{e(note)}</text>'
            )
        if threshold is not None and threshold.values[index] is not None:
            x = left + track * _clip(threshold.values[index] or 0.0)
            bottom = top + len(bars) * (bar_height + 4)
            parts.append(
                f'<line class="series-threshold" x1="{x:.1f}" y1="{top - 4:.1f}" x2="{x:.1f}" '
                f'y2="{bottom:.1f}" stroke="#dc2626" stroke-width="2.5">'
                f"<title>{e(threshold.label)}: {_fmt(threshold.values[index])}</title></line>"
            )
    parts.append("</svg>")
    return "".join(parts)
