"""How `localeval calibrate --fit` shows its maps: per kind of verdict, the error on each
held-out part before and after the map, and the reliability diagram as text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from localeval.calibration.fit import KindFit
from localeval.verdict_maps import KINDS, ReliabilityBin


def reliability_lines(bins: Sequence[ReliabilityBin], width: int = 40) -> list[str]:
    """A reliability diagram in text: a bar per bin of calibrated scores, as long as the
    share labelled positive, with `|` where a perfectly calibrated bar would end."""
    lines = [f"  {'scores':<9} {'rows':>5} {'mean':>5} {'positive':>8}  (| = calibrated)"]
    for b in bins:
        cells = ["#" if i < round(b.mean_label * width) else " " for i in range(width + 1)]
        cells[min(round(b.mean_score * width), width)] = "|"
        lines.append(
            f"  {b.low:.1f}-{b.high:.1f}   {b.n:>5} {b.mean_score:>5.2f} {b.mean_label:>8.2f}  "
            + "".join(cells).rstrip()
        )
    return lines


def fits_text(fits: Mapping[str, KindFit]) -> str:
    """Every fitted map with what was measured of it on rows it was not fitted on."""
    if not fits:
        return "No calibration map: no labelled row scored a judge verdict with two labels."
    parts = []
    for kind, fit in fits.items():
        lines = [
            f"Calibration map '{kind}' ({KINDS.get(kind, kind)}):",
            f"  p' = sigmoid({fit.map.a:.3f} * logit(p) {'-' if fit.map.b < 0 else '+'} "
            f"{abs(fit.map.b):.3f}), fitted on "
            f"{fit.map.fitted_on}",
            f"  expected calibration error on held-out {fit.unit} ({fit.scheme}): "
            f"{fit.ece_raw:.3f} raw -> {fit.ece:.3f} calibrated",
        ]
        for part in fit.held_out:
            lines.append(
                f"    held out {part.name}: {part.rows} {fit.unit}, ECE {part.ece_raw:.3f} -> "
                f"{part.ece:.3f}"
            )
        why = fit.not_kept_because()
        if why is not None:
            lines.append(
                f"  not kept: {why}, so this kind of verdict stays uncalibrated (its raw P(Yes))"
            )
        lines.append(f"  reliability on held-out {fit.unit}:")
        lines += reliability_lines(fit.bins)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
