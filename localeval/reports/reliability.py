"""A reliability diagram as inline SVG (no script, no external resource): for each bin of
calibrated verdict scores, the share of rows people labelled positive, against the
diagonal a perfectly calibrated judge would follow. templates/charts.svg.j2 draws it."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from localeval.reports.templating import macro
from localeval.verdict_maps import ReliabilityBin


def reliability_svg(title: str, bins: Sequence[ReliabilityBin], ece: float | None) -> Markup:
    """One diagram: x = mean calibrated score of a bin, y = mean label; dot area ~ rows."""
    size, margin = 220.0, 40.0

    def x(value: float) -> float:
        return margin + size * min(1.0, max(0.0, value))

    def y(value: float) -> float:
        return margin + size * (1 - min(1.0, max(0.0, value)))

    most = max((b.n for b in bins), default=1)
    chart = {
        "size": size,
        "margin": margin,
        "width": size + 2 * margin,
        "height": size + 2 * margin + 18,
        "x": x,
        "y": y,
        "caption": title if ece is None else f"{title} (ECE {ece:.3f})",
        "described": "; ".join(
            f"scores {b.low:.1f}-{b.high:.1f}: {b.n} rows, mean score {b.mean_score:.2f}, "
            f"labelled positive {b.mean_label:.2f}"
            for b in bins
        ),
        "bins": bins,
        "points": " ".join(f"{x(b.mean_score):.1f},{y(b.mean_label):.1f}" for b in bins),
        "dots": [(b, 3 + 6 * (b.n / most) ** 0.5) for b in bins],
    }
    return macro("charts.svg.j2", "reliability")(chart)
