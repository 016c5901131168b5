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

from markupsafe import Markup

from localeval.reports.templating import macro

#: polygon/bar styles by series kind; the report's stylesheet has the legend swatches
STYLES: dict[str, Markup] = {
    "run": Markup('fill="#2563eb" fill-opacity="0.22" stroke="#1d4ed8" stroke-width="2.5"'),
    "threshold": Markup('fill="none" stroke="#dc2626" stroke-width="2" stroke-dasharray="6 4"'),
    "baseline": Markup('fill="none" stroke="#6b7280" stroke-width="2" stroke-dasharray="2 3"'),
}
BAR_FILL = {"run": "#2563eb", "baseline": "#9ca3af"}
TEMPLATE = "charts.svg.j2"


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


def metrics_chart_svg(metrics: Sequence[str], series: Sequence[Series]) -> Markup:
    """The chart for these metrics: a radar for three or more, bars for one or two."""
    if not metrics:
        return Markup("")
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


def radar_svg(metrics: Sequence[str], series: Sequence[Series]) -> Markup:
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

    # grid: rings at quarter steps, one spoke per metric
    rings = [(ring, polygon([ring] * count), *point(0, ring)) for ring in (0.25, 0.5, 0.75, 1.0)]
    # series: thresholds and baseline under the run, so the run's fill does not hide them
    order = {"threshold": 0, "baseline": 1, "run": 2}
    drawn = []
    for line in sorted(series, key=lambda s: order[s.kind]):
        gaps = line.kind != "run" and any(v is None for v in line.values)
        values = [0.0 if v is None else v for v in line.values]
        drawn.append(
            {
                "kind": line.kind,
                "label": line.label,
                "style": STYLES[line.kind],
                # a tick is short: a finer dash reads as dashed on it
                "tick_style": STYLES[line.kind].replace("6 4", "3 2"),
                "ticks": _axis_ticks(line, point, count) if gaps else None,
                "points": polygon(values),
                "dots": [point(i, v) for i, v in enumerate(values)] if line.kind == "run" else [],
            }
        )
    chart = {
        "width": width,
        "height": height,
        "cx": cx,
        "cy": cy,
        "aria": _aria_label(metrics, series),
        "rings": rings,
        "spokes": [point(index, 1.0) for index in range(count)],
        "series": drawn,
        "labels": _radar_labels(metrics, series, (cx, cy), radius),
    }
    return macro(TEMPLATE, "radar")(chart)


def _radar_labels(
    metrics: Sequence[str], series: Sequence[Series], centre: tuple[float, float], radius: float
) -> list[tuple[float, float, str, str, str]]:
    """Beside each axis (x, y, anchor) the metric, then the run's value against the threshold."""
    cx, cy = centre
    count = len(metrics)
    labels = []
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
        labels.append((x, y, anchor, metric, detail))
    return labels


def _axis_ticks(
    line: Series, point: Callable[[int, float], tuple[float, float]], count: int
) -> list[tuple[float, float, float, float, str]]:
    """A series with gaps (a metric without a gate, or missing from the baseline) as a short
    tick across each axis it has a value on: a polygon through 0 would misstate it."""
    ticks = []
    for index, value in enumerate(line.values):
        if value is None:
            continue
        angle = -math.pi / 2 + 2 * math.pi * index / count
        x, y = point(index, value)
        dx, dy = -math.sin(angle) * 9, math.cos(angle) * 9
        ticks.append((x - dx, y - dy, x + dx, y + dy, _fmt(value)))
    return ticks


def bars_svg(metrics: Sequence[str], series: Sequence[Series]) -> Markup:
    """Horizontal bars per metric (run, then baseline), the threshold as a red tick."""
    left, track, right = 150.0, 300.0, 110.0
    bars = [s for s in series if s.kind != "threshold"]
    threshold = next((s for s in series if s.kind == "threshold"), None)
    bar_height, gap = 16.0, 26.0
    block = len(bars) * (bar_height + 4) + gap
    height = 30 + block * len(metrics)
    blocks = []
    for index, metric in enumerate(metrics):
        top = 12 + index * block
        drawn = []
        for row, line in enumerate(bars):
            value = line.values[index]
            note = _fmt(value)
            if line.kind == "run" and threshold is not None:
                note += f" (gate {_fmt(threshold.values[index])})"
            drawn.append(
                {
                    "kind": line.kind,
                    "y": top + row * (bar_height + 4),
                    "length": track * _clip(value or 0.0),
                    "fill": BAR_FILL[line.kind],
                    "label": line.label,
                    "value": _fmt(value),
                    "note": note,
                }
            )
        gate = None
        if threshold is not None and threshold.values[index] is not None:
            x = left + track * _clip(threshold.values[index] or 0.0)
            bottom = top + len(bars) * (bar_height + 4)
            gate = (x, bottom, threshold.label, _fmt(threshold.values[index]))
        blocks.append({"top": top, "metric": metric, "bars": drawn, "gate": gate})
    chart = {
        "width": left + track + right,
        "height": height,
        "left": left,
        "track": track,
        "bar_height": bar_height,
        "aria": _aria_label(metrics, series),
        "ticks": [(tick, left + track * tick) for tick in (0.0, 0.25, 0.5, 0.75, 1.0)],
        "blocks": blocks,
    }
    return macro(TEMPLATE, "bars")(chart)
