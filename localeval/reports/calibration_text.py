"""How `localeval calibrate` shows what it found: the agreement figures as a table, the
gates suggested as models.toml text, and with --fit per kind of verdict the error on each
held-out part before and after the map, and the reliability diagram as text."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from localeval.calibration.agreement import Calibration
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


def thresholds_snippet(judge: str, thresholds: dict[str, float]) -> str:
    """The suggested thresholds as a models.toml table for `judge`."""
    lines = [
        "Gate thresholds on this judge's scale (best_threshold over all rows of each metric),",
        "for models.toml:",
        f'[judges."{judge}".thresholds]',
    ]
    lines += [f"{metric} = {value:.2f}" for metric, value in thresholds.items()]
    return "\n".join(lines)


def format_table(calibration: Calibration) -> str:
    """The agreement figures as a text table, one line per figure."""
    counts = calibration.counts()
    found = calibration.agreements
    # as wide as the longest name (a dataset called "ragchecker_meta_eval"), at least the
    # widths the table always had
    wide = [
        max([width, *(len(getattr(a, key)) for a in found)])
        for key, width in (("dataset", 14), ("metric", 18), ("measure", 14))
    ]
    head = zip(("dataset", "metric", "measure"), wide, strict=True)
    header = " ".join(f"{name:<{width}}" for name, width in head)
    lines = [f"{header} {'value':>6}  {'95% CI':>15} {'n':>5} {'undef':>5} {'unparsed':>8}"]
    for a in found:
        value = "-" if a.value is None or math.isnan(a.value) else f"{a.value:.3f}"
        interval = "-" if a.ci95 is None else f"[{a.ci95[0]:.2f}, {a.ci95[1]:.2f}]"
        c = counts.get((a.dataset, a.metric), {"undefined": 0, "unparseable": 0})
        names = zip((a.dataset, a.metric, a.measure), wide, strict=True)
        lines.append(
            " ".join(f"{name:<{width}}" for name, width in names)
            + f" {value:>6}  {interval:>15} {a.n:>5} {c['undefined']:>5} {c['unparseable']:>8}"
        )
    return "\n".join(lines)
