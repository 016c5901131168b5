"""A reliability diagram as inline SVG (no script, no external resource): for each bin of
calibrated verdict scores, the share of rows people labelled positive, against the
diagonal a perfectly calibrated judge would follow."""

from __future__ import annotations

from collections.abc import Sequence

from localeval.report.templating import escaped as e
from localeval.verdict_maps import ReliabilityBin


def reliability_svg(title: str, bins: Sequence[ReliabilityBin], ece: float | None) -> str:
    """One diagram: x = mean calibrated score of a bin, y = mean label; dot area ~ rows."""
    size, margin = 220.0, 40.0
    width, height = size + 2 * margin, size + 2 * margin + 18

    def x(value: float) -> float:
        return margin + size * min(1.0, max(0.0, value))

    def y(value: float) -> float:
        return margin + size * (1 - min(1.0, max(0.0, value)))

    most = max((b.n for b in bins), default=1)
    caption = title if ece is None else f"{title} (ECE {ece:.3f})"
    described = "; ".join(
        f"scores {b.low:.1f}-{b.high:.1f}: {b.n} rows, mean score {b.mean_score:.2f}, "
        f"labelled positive {b.mean_label:.2f}"
        for b in bins
    )
    parts = [
        f'<svg class="chart reliability" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'aria-label="{e(caption + ": " + described)}">',
        f'<text x="{width / 2:.0f}" y="16" text-anchor="middle" font-size="13">{e(caption)}</text>',
        f'<rect x="{margin}" y="{margin}" width="{size}" height="{size}" fill="none" '
        'stroke="#9ca3af"/>',
        f'<line x1="{x(0):.1f}" y1="{y(0):.1f}" x2="{x(1):.1f}" y2="{y(1):.1f}" '
        'stroke="#6b7280" stroke-dasharray="4 4"/>',
    ]
    for tick in (0.0, 0.5, 1.0):
        parts.append(
            f'<text x="{x(tick):.1f}" y="{margin + size + 14:.1f}" text-anchor="middle" '
            f'font-size="10">{tick:.1f}</text>'
        )
        parts.append(
            f'<text x="{margin - 6:.1f}" y="{y(tick) + 3:.1f}" text-anchor="end" '
            f'font-size="10">{tick:.1f}</text>'
        )
    parts.append(
        f'<text x="{width / 2:.0f}" y="{height - 4:.0f}" text-anchor="middle" font-size="11">'
        "calibrated score (x) against share labelled positive (y)</text>"
    )
    points = " ".join(f"{x(b.mean_score):.1f},{y(b.mean_label):.1f}" for b in bins)
    if len(bins) > 1:
        parts.append(f'<polyline points="{points}" fill="none" stroke="#1d4ed8" stroke-width="2"/>')
    for b in bins:
        radius = 3 + 6 * (b.n / most) ** 0.5
        parts.append(
            f'<circle cx="{x(b.mean_score):.1f}" cy="{y(b.mean_label):.1f}" r="{radius:.1f}" '
            f'fill="#2563eb" fill-opacity="0.6"><title>{b.n} rows: mean score '
            f"{b.mean_score:.2f}, labelled positive {b.mean_label:.2f}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)
