"""`evaluate --until-decided` in words: how many samples decided it, and each metric's verdict
with its confidence sequence."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from localeval.reports.console import WIDTH
from localeval.results.decision import SAME_INPUTS, UNDECIDED
from localeval.text import printable

#: why a metric was decided without a test (`run.until_decided.not_tested`), in words
_NOT_TESTED = {SAME_INPUTS: "its inputs are the same in every pair: not tested"}


def not_tested_words(reason: Any) -> str:
    """Why a metric was decided without a test, as the summary, `runs show` and the
    reports say it (one place for the wording)."""
    return _NOT_TESTED.get(reason, f"not tested: {printable(str(reason))}")


def _not_tested(report: Mapping[str, Any]) -> dict[str, Any]:
    """`not_tested` of a `run.until_decided` ({} for a run recorded before it was)."""
    found = report.get("not_tested")
    return dict(found) if isinstance(found, Mapping) else {}


def decision_text(report: dict[str, Any], baseline: str, warnings: Sequence[str] = ()) -> str:
    """`report`: results.json's `run.until_decided`; `baseline`: how the BASE run is named."""
    scored, total = report["samples_scored"], report["samples_total"]
    verdicts: dict[str, str] = report["verdicts"]
    untested = _not_tested(report)
    tested = len(verdicts) - len(untested)
    share = f"{scored / total:.0%}" if total else "-"
    if not tested:
        head = (
            f"Decided without scoring a sample, against {printable(baseline)}: no gated metric "
            "can have changed, since the inputs of each are the same in every pair and both "
            "runs scored them alike."
        )
    else:
        if all(v != UNDECIDED for v in verdicts.values()):
            head = f"Decided after {scored} of {total} samples ({share})"
        else:
            head = f"Not decided: all {scored} samples that can be paired were scored ({share})"
        metrics = f"{tested} metric{'s' * (tested != 1)}"
        head += (
            f", against {printable(baseline)}: NEW - BASE, 95% anytime-valid confidence "
            f"sequences (the 5% split over {metrics}); no change: within +-{report['margin']:g}."
        )
    lines = [textwrap.fill(head, WIDTH, break_on_hyphens=False)]
    lines += [textwrap.fill(f"Warning: {w}.", WIDTH) for w in warnings]
    width = max(len(m) for m in verdicts)
    for metric, verdict in verdicts.items():
        if metric in untested:
            lines.append(
                f"  {printable(metric):<{width}}  {verdict:<9}  "
                f"({not_tested_words(untested[metric])})"
            )
            continue
        shown = report["metrics"][metric]
        lower, upper = shown["confidence_sequence"]
        change = "-" if shown["change"] is None else f"{shown['change']:+.3f}"
        lines.append(
            f"  {printable(metric):<{width}}  {verdict:<9}  {change:>6}  "
            f"[{lower:+.3f}, {upper:+.3f}]  {shown['n_paired']} pairs"
        )
    return "\n".join(lines)


def decision_line(report: Any, n_scored: int) -> str | None:
    """A run's `run.until_decided` in one line, for `runs show` and the reports: how many
    samples decided it against which run, and each metric's verdict; `n_scored`: how many
    the run holds now (more than decided it, once a later `evaluate` went on). None when
    the run holds no such comparison (or one this localeval cannot read)."""
    if not isinstance(report, dict) or not isinstance(report.get("verdicts"), dict):
        return None
    scored, total = report.get("samples_scored"), report.get("samples_total")
    if not isinstance(scored, int) or not isinstance(total, int):
        return None
    untested = _not_tested(report)
    verdicts = ", ".join(
        f"{printable(m)} {printable(v)}"
        + (f" ({not_tested_words(untested[m])})" if m in untested else "")
        for m, v in report["verdicts"].items()
    )
    decided = all(v != UNDECIDED for v in report["verdicts"].values())
    against = f" against run {printable(report['baseline'])}" if report.get("baseline") else ""
    line = (
        f"{'decided' if decided else 'not decided'} after {scored} of {total} samples"
        f"{against} (evaluate --until-decided): {verdicts or 'no metric'}"
    )
    if n_scored > scored:
        line += f"; {n_scored - scored} more scored later by evaluate without the option"
    return line


def cost_line(report: Any) -> str | None:
    """What the `evaluate --until-decided` process spent (`run.until_decided.cost`), in one
    line: the samples it scored, the prompt tokens the judge read, and how many samples read
    their contexts from kept states. None for a run without it (recorded before it was)."""
    cost = report.get("cost") if isinstance(report, dict) else None
    keys = ("samples_scored", "prompt_tokens", "samples_from_states", "restored_prompt_tokens")
    if not isinstance(cost, dict) or not all(isinstance(cost.get(k), int) for k in keys):
        return None
    scored, read, kept, restored = (cost[k] for k in keys)
    return (
        f"{scored} sample{'' if scored == 1 else 's'} scored, {read:,} prompt tokens read; "
        f"{kept} of them read their contexts from kept states ({restored:,} tokens not read "
        "again)"
    )
