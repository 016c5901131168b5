"""The Markdown report: a summary short enough for a pull-request comment.

Every string from the results file goes into a code span (`md_code`), where Markdown and
HTML are not interpreted: a dataset cannot add links, images, HTML, mentions or tables
to the comment. Whitespace is collapsed so a newline cannot end a table row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from localeval.report.decision_text import decision_line
from localeval.results import view
from localeval.results.calibration import calibrated_on
from localeval.results.corrected import corrected_words
from localeval.results.diagnosis import diagnosis_lines
from localeval.results.gates import GateResult, advice
from localeval.results.view import RunView, as_view
from localeval.text import neutralised

#: characters of dataset text kept in a table cell or list item before it is cut
CELL_CHARS = 140
PASS, FAIL, WARN = "✅", "❌", "⚠️"


def md_code(value: Any, limit: int = CELL_CHARS, in_table: bool = True) -> str:
    """Any text as an inline code span that renders literally (in a table cell, or outside
    one with `in_table=False`)."""
    # control and bidi-override characters could hide or reorder text: a placeholder
    flat = " ".join(neutralised(view.text(value)).split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    if not flat:
        return "*(empty)*"
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    if in_table:  # a table splits cells at every unescaped pipe, code spans included
        flat = flat.replace("|", "\\|")
    return f"{fence}{pad}{flat}{pad}{fence}"


def render_markdown(
    results: RunView | Mapping[str, Any],
    baseline: RunView | Mapping[str, Any] | None = None,
    worst: int = 5,
) -> str:
    """Verdict, summary table, failing gates with remedies, and the worst samples."""
    run = as_view(results)
    base = None if baseline is None else as_view(baseline)
    gates, failed = run.gates, run.failed_gates
    if not gates:
        headline = "localeval: no quality gate applies to these metrics"
    elif failed:
        headline = f"{FAIL} localeval: {len(failed)} of {len(gates)} quality gates failed"
    else:
        headline = f"{PASS} localeval: all {len(gates)} quality gates pass"
    lines = [f"### {headline}", "", _run_line(run), ""]
    if (decision := decision_line(run.run.get("until_decided"), run.n_samples)) is not None:
        # the metric names and the baseline's id come from the results file: a code span
        lines += [f"Comparison: {md_code(decision, limit=400, in_table=False)}", ""]
    lines += _calibration(run)
    lines += _summary_table(run, base)
    lines += _corrected(run)
    if failed:
        lines += ["", "**Failing gates**", ""]
        lines += [_failing(gate) for gate in failed]
    if run.diagnosis is not None:
        # our words and counts only: no dataset text reaches these lines
        lines += ["", "**Diagnosis** (answer_correctness --diagnose)", ""]
        found = diagnosis_lines(run.diagnosis)
        lines += [line if line.startswith("- ") else f"- {line}" for line in found]
    lines += _worst_samples(run, worst)
    return "\n".join(lines) + "\n"


def _calibration(run: RunView) -> list[str]:
    """A warning when the judge is not calibrated for some metrics; what its maps were
    fitted on."""
    status = run.calibration
    if status is None:
        return []
    lines = []
    if status.uncalibrated:
        # dataset text never reaches this line: the judge's name is put in a code span
        lines += [
            f"{WARN} Judge {md_code(status.judge, in_table=False)} is not calibrated for "
            f"{status.named(status.uncalibrated)}: those scores are its raw P(Yes), on its own "
            "scale.",
            "",
        ]
    # what the maps were fitted on: words of the project's own, or dataset file names,
    # which go in code spans like any text from the results file
    for kind, text in calibrated_on(status):
        judge = md_code(status.judge, in_table=False)
        fitted = md_code(text, in_table=False)
        lines += [f"Judge {judge} calibrated for {kind} on {fitted}.", ""]
    return lines


def _corrected(run: RunView) -> list[str]:
    """The means people would give, from the team's labels, or how many more to label."""
    if not run.corrected:
        return []
    # our words and numbers; a metric's name in a code span, as any text from a results file
    lines = ["", "**Corrected by people's labels** (the mean people would give, 95% CI)", ""]
    for metric, entry in run.corrected.items():
        review = md_code(f"localeval review {run.run_id or 'RUN'}", in_table=False)
        lines.append(f"- {md_code(metric, in_table=False)}: {corrected_words(entry, review)}")
    return lines


def _failing(gate: GateResult) -> str:
    """A failing gate's line, with its likely cause and remedies."""
    value = "undefined" if gate.value is None else f"{gate.value:.3f}"
    name = md_code(gate.metric, in_table=False)
    line = f"- {FAIL} {name} = {value}{gate.read_as()}, below {gate.threshold:.2f}."
    if gate.needed:
        return f"- {FAIL} {name}: {gate.labels_wanted()}."
    if gate.too_few_defined:
        total = (gate.n_defined or 0) + (gate.n_undefined or 0)
        return (
            f"- {FAIL} {name} = {value} from only {gate.n_defined} of {total} samples: "
            f"a gate needs {gate.min_defined:.0%} of them scored."
        )
    if found := advice(gate.metric):
        cause, remedies = found
        line += f" Likely cause: {cause}. Try: {'; '.join(remedies)}."
    return line


def _run_line(run: RunView) -> str:
    parts = [f"Run {md_code(run.run_id, in_table=False)}"]
    if run.dataset:
        parts[0] += f" on {md_code(run.dataset, in_table=False)}"
    parts.append(f"{run.n_samples} samples")
    judge = run.model("judge")
    if judge is not None and judge.get("name"):
        parts.append(f"judge {md_code(judge.get('name'), in_table=False)}")
    return " · ".join(parts)


def _summary_table(run: RunView, baseline: RunView | None) -> list[str]:
    head = "| metric | mean | 95% CI | undefined | gate | |"
    rule = "|---|--:|:-:|--:|--:|:-:|"
    if baseline is not None:
        head += " baseline | Δ |"
        rule += "--:|--:|"
    rows = [head, rule]
    for row in run.summary_rows(baseline):
        ci = None if row.summary is None else row.summary.ci95
        ci_text = "-" if ci is None else f"{view.fmt(ci[0])}–{view.fmt(ci[1])}"
        undefined = None if row.summary is None else row.summary.n_undefined
        gate = "-" if row.threshold is None else f"≥ {row.threshold:.2f}"
        mark = "" if row.passed is None else (PASS if row.passed else FAIL)
        line = (
            f"| {md_code(row.metric)} | {view.fmt(row.mean)} | {ci_text} | "
            f"{view.fmt(undefined, 0)} | {gate} | {mark} |"
        )
        if baseline is not None:
            delta = "-" if row.delta is None else f"{row.delta:+.3f}"
            line += f" {view.fmt(row.baseline)} | {delta} |"
        rows.append(line)
    if baseline is not None:
        run_id = md_code(baseline.run_id, in_table=False)
        rows += [
            "",
            f"Baseline: run {run_id}. Δ is a difference of means, not a significance test.",
        ]
    return rows


def _worst_samples(run: RunView, count: int) -> list[str]:
    if count <= 0:
        return []
    worst = run.worst(count)
    if not worst:
        return []
    lines = [
        "",
        f"<details><summary>{len(worst)} worst samples</summary>",
        "",
        "| sample | category | metric | score | evidence |",
        "|---|---|---|--:|---|",
    ]
    for item in worst:
        sample = item.sample
        details = sample.get("details", {})
        hint = view.evidence_hint(
            item.metric, details.get(item.metric) if isinstance(details, dict) else None
        )
        mark = f" {FAIL}" if item.below else ""
        evidence = "-"
        if hint is not None:
            evidence = hint.label + ("" if hint.quote is None else f": {md_code(hint.quote)}")
        category = sample.get("category")
        lines.append(
            f"| {md_code(sample.get('sample_id'))} | "
            f"{md_code(category) if category else '-'} | {md_code(item.metric)} | "
            f"{item.score:.3f}{mark} | {evidence} |"
        )
    lines += ["", "</details>"]
    return lines
