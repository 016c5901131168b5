"""`evaluate --until-decided` in words: how many samples decided it, and each metric's verdict
with its confidence sequence."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from localeval.report.console import WIDTH
from localeval.results.decision import UNDECIDED
from localeval.text import printable


def decision_text(report: dict[str, Any], baseline: str, warnings: Sequence[str] = ()) -> str:
    """`report`: results.json's `run.until_decided`; `baseline`: how the BASE run is named."""
    scored, total = report["samples_scored"], report["samples_total"]
    verdicts: dict[str, str] = report["verdicts"]
    share = f"{scored / total:.0%}" if total else "-"
    if all(v != UNDECIDED for v in verdicts.values()):
        head = f"Decided after {scored} of {total} samples ({share})"
    else:
        head = f"Not decided: all {scored} samples that can be paired were scored ({share})"
    metrics = f"{len(verdicts)} metric{'s' * (len(verdicts) != 1)}"
    head += (
        f", against {printable(baseline)}: NEW - BASE, 95% anytime-valid confidence "
        f"sequences (the 5% split over {metrics}); no change: within +-{report['margin']:g}."
    )
    lines = [textwrap.fill(head, WIDTH, break_on_hyphens=False)]
    lines += [textwrap.fill(f"Warning: {w}.", WIDTH) for w in warnings]
    width = max(len(m) for m in verdicts)
    for metric, verdict in verdicts.items():
        shown = report["metrics"][metric]
        lower, upper = shown["confidence_sequence"]
        change = "-" if shown["change"] is None else f"{shown['change']:+.3f}"
        lines.append(
            f"  {printable(metric):<{width}}  {verdict:<9}  {change:>6}  "
            f"[{lower:+.3f}, {upper:+.3f}]  {shown['n_paired']} pairs"
        )
    return "\n".join(lines)
