"""Plain-text summaries for the terminal."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

from localeval.judge import Usage
from localeval.pairwise.judge import PairVerdict
from localeval.pairwise.rows import PairRow, PairwiseSummary, verdict_label
from localeval.results.calibration import calibration_sentence, fitted_sentence
from localeval.results.corrected import corrected_lines
from localeval.results.diagnosis import diagnosis_lines
from localeval.results.gates import GateResult
from localeval.results.view import RunView
from localeval.stats import MetricSummary
from localeval.text import counted, printable

#: the width sentences are wrapped to
WIDTH = 88


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _interval(summary: MetricSummary) -> str:
    if summary.ci95 is None:
        return "-"
    return f"[{summary.ci95[0]:.3f}, {summary.ci95[1]:.3f}]"


def summary_table(summaries: Mapping[str, MetricSummary], title: str | None = None) -> str:
    """One row per metric: mean, 95% bootstrap interval, n defined, n undefined."""
    # names from a results file or a dataset are shown on one line, escapes as text
    names = {metric: printable(metric) for metric in summaries}
    width = max([len("metric"), *(len(m) for m in names.values())])
    lines = []
    if title:
        lines.append(title)
    lines.append(f"{'metric':<{width}}  {'mean':>6}  {'95% CI':>16}  {'n':>5}  {'undefined':>9}")
    for metric, s in summaries.items():
        lines.append(
            f"{names[metric]:<{width}}  {_number(s.mean):>6}  {_interval(s):>16}  {s.n:>5}  "
            f"{s.n_undefined:>9}"
        )
    return "\n".join(lines)


def category_tables(by_category: Mapping[str, Mapping[str, MetricSummary]]) -> str:
    """A summary table per category; empty when every sample has the same (or no) category."""
    if len(by_category) < 2:
        return ""
    return "\n\n".join(
        summary_table(summaries, title=f"category: {printable(category)}")
        for category, summaries in by_category.items()
    )


def run_summary(view: RunView, from_judge: Sequence[str] = (), judge: str | None = None) -> str:
    """A run as `evaluate`, `runs show` and `runs merge` print it: the summary (sub-scores
    included), per category, the calibration, the diagnosis, the gates and what the judge
    did. `from_judge`: metrics whose threshold is the judge's own (`judge`'s models.toml)."""
    parts = [summary_table(view.summaries)]
    if categories := category_tables(view.by_category):
        parts.append(categories)
    # an uncalibrated judge is said in the reports' calibration note, not here: the
    # corrected means below say what to do about it, in a user's words
    if view.calibration is not None and not view.calibration.uncalibrated:
        parts.append(textwrap.fill(calibration_sentence(view.calibration), WIDTH))
    elif view.calibration is not None and (fitted := fitted_sentence(view.calibration)):
        parts.append(textwrap.fill(fitted, WIDTH))  # the maps it has, and their labels
    if view.corrected:
        parts.append(corrected_text(view))
    if view.diagnosis is not None:
        lines = (textwrap.fill(line, WIDTH) for line in diagnosis_lines(view.diagnosis))
        parts.append("Diagnosis (--answer-correctness-diagnose):\n" + "\n".join(lines))
    if view.gates:
        parts.append(gates_text(list(view.gates), from_judge, judge))
    if view.usage is not None:
        parts.append(usage_text(view.usage))
    return "\n\n".join(parts)


def corrected_text(view: RunView) -> str:
    """The means people would give, from the team's labels (or how to get them), overall
    and for each category that has enough labels."""
    lines = ["Corrected by people's labels (the mean people would give, 95% interval):"]
    wrap = textwrap.TextWrapper(WIDTH, initial_indent="  ", subsequent_indent="    ")
    for line in corrected_lines(view.corrected, view.run_id, view.planned_samples):
        lines += wrap.wrap(printable(line))
    for category, entries in view.corrected_by_category.items():
        found = {m: e for m, e in entries.items() if e.estimate is not None}
        for line in corrected_lines(found, view.run_id):
            lines += wrap.wrap(printable(f"category {category}, {line}"))
    return "\n".join(lines)


def gates_text(
    gates: list[GateResult], from_judge: Sequence[str] = (), judge: str | None = None
) -> str:
    """The gates, PASS or FAIL; `from_judge`: metrics whose threshold is the judge's own."""
    lines = ["Quality gates:"]
    if from_judge:
        lines[0] = (
            f"Quality gates (thresholds for {', '.join(from_judge)} on judge {judge}'s scale, "
            "from models.toml):"
        )
    for gate in gates:
        said = gate.line() if gate.passed else gate.explanation()
        lines.append(f"  {'PASS' if gate.passed else 'FAIL'}  {said}")
    return "\n".join(lines)


def usage_text(usage: Usage) -> str:
    retried = f", {usage.retries} requests retried" if usage.retries else ""
    return (
        f"judge: {usage.judge_calls} calls ({usage.cached_calls} from cache), "
        f"{usage.prompt_tokens} prompt tokens evaluated, {usage.generated_tokens} generated"
        f"{retried}; {usage.seconds:.1f} s"
    )


def pairwise_rows_table(rows: Sequence[PairRow], verdicts: Sequence[PairVerdict | None]) -> str:
    """One line per compared row: winner, confidence, both scores, flipped, label match."""
    ids = [printable(r.sample_id) for r in rows]
    width = max([len("row"), *(len(i) for i in ids)])
    lines = [
        f"{'row':<{width}}  {'winner':>6}  {'conf':>5}  {'A':>5}  {'B':>5}  {'flipped':>7}  label"
    ]
    for row, sample_id, verdict in zip(rows, ids, verdicts, strict=True):
        if verdict is None:
            lines.append(f"{sample_id:<{width}}  {'-':>6}  (too long for the judge)")
            continue
        label = "-"
        if row.label is not None:
            label = "agrees" if verdict_label(verdict.winner) == row.label else "differs"
        lines.append(
            f"{sample_id:<{width}}  {verdict.winner:>6}  {verdict.confidence:>5.2f}  "
            f"{verdict.score_a:>5.2f}  {verdict.score_b:>5.2f}  "
            f"{'yes' if verdict.flipped else 'no':>7}  {label}"
        )
    return "\n".join(lines)


def pairwise_summary_text(summary: PairwiseSummary) -> str:
    """B's win rate over A with its interval, the record, order flips and label agreement."""
    interval = "-" if summary.ci95 is None else f"[{summary.ci95[0]:.3f}, {summary.ci95[1]:.3f}]"
    lines = [
        f"B over A: win rate {summary.win_rate_b:.3f}, 95% CI {interval} "
        f"(wins B {summary.wins_b}, wins A {summary.wins_a}, ties {summary.ties}; "
        f"n {summary.n})",
        f"Order flips: {summary.flipped} of {summary.n} rows changed verdict when A and B "
        "were swapped (counted as ties)",
    ]
    if summary.n_undefined:
        lines.append(f"Not judged: {summary.n_undefined} rows too long for the judge")
    agreement = summary.agreement()
    if agreement is not None:
        lines.append(
            f"Agreement with labels: {summary.agreed} of {summary.labelled} ({agreement:.1%}); "
            "a tie agrees only with a 0 label"
        )
    return "\n".join(lines)


def states_line(samples_from_states: int, restored_prompt_tokens: int) -> str | None:
    """What a run's scoring restored from the judge's kept context states, in a line (None:
    nothing), as `--estimate` says it of a run to come."""
    if not samples_from_states:
        return None
    return (
        f"{counted(samples_from_states, 'sample')} read their contexts from kept states: "
        f"{restored_prompt_tokens:,} prompt tokens not read again."
    )
