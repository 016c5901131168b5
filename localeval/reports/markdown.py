"""The Markdown report: a summary short enough for a pull-request comment.

Every string from the results file goes into a code span (`md_code`), where Markdown and
HTML are not interpreted: a dataset cannot add links, images, HTML, mentions or tables
to the comment. Whitespace is collapsed so a newline cannot end a table row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, StrictUndefined

from localeval.metrics.base import Evidence
from localeval.reports.decision_text import decision_line
from localeval.reports.templating import template_sources
from localeval.results import view
from localeval.results.calibration import calibrated_on
from localeval.results.corrected import corrected_words
from localeval.results.diagnosis import diagnosis_lines
from localeval.results.gates import GateResult, advice
from localeval.results.view import RunView, Shortfall, SummaryRow, as_view
from localeval.text import all_gates_pass, neutralised

#: characters of dataset text kept in a table cell or list item before it is cut
CELL_CHARS = 140
PASS, FAIL = "✅", "❌"


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


class Markdown(str):
    """Text of the report's own words and numbers, written as it is; any other value the
    template writes becomes a code span."""


def md_value(value: Any) -> str:
    """What the Markdown template writes for a value: the report's own text as it is, a
    count as digits, anything else as a code span for a table cell."""
    if isinstance(value, Markdown):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return md_code(value)


def _num(value: float, spec: str) -> Markdown:
    return Markdown(format(value, spec))


def _undefined(row: SummaryRow) -> int | None:
    return None if row.summary is None else row.summary.n_undefined


def _ci(row: SummaryRow) -> Markdown:
    ci = None if row.summary is None else row.summary.ci95
    return Markdown("-" if ci is None else f"{view.fmt(ci[0])}–{view.fmt(ci[1])}")


def _gate_value(gate: GateResult) -> Markdown:
    return Markdown("undefined" if gate.value is None else f"{gate.value:.3f}")


def _evidence_hint(item: Shortfall) -> Evidence | None:
    details = item.sample.get("details", {})
    found = details.get(item.metric) if isinstance(details, dict) else None
    return view.evidence_hint(item.metric, found)


MD = Environment(
    loader=template_sources("localeval.reports", "templates", ".md.j2"),
    autoescape=False,  # Markdown, not HTML: md_value makes every value inert instead
    finalize=md_value,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
MD.filters["code"] = lambda value: Markdown(md_code(value, in_table=False))
MD.globals.update(
    PASS=Markdown(PASS),
    FAIL=Markdown(FAIL),
    ours=lambda text: Markdown(str(text)),
    num=_num,
    fmt=lambda value, digits=3: Markdown(view.fmt(value, digits)),
    ci=_ci,
    undefined=_undefined,
    gate=lambda row: Markdown(row.gate_text()),
    mark=lambda passed: Markdown("" if passed is None else (PASS if passed else FAIL)),
    delta=lambda row: Markdown("-" if row.delta is None else f"{row.delta:+.3f}"),
    gate_value=_gate_value,
    advice=advice,
    calibrated_on=calibrated_on,
    corrected_words=corrected_words,
    evidence_hint=_evidence_hint,
)


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
        headline = f"{PASS} localeval: {all_gates_pass(len(gates))}"
    judge = run.model("judge")
    review = md_code(f"localeval review {run.run_id or 'RUN'}", in_table=False)
    # the metric names and the baseline's id come from the results file: a code span
    decision = decision_line(run.run.get("until_decided"), run.n_samples)
    return MD.get_template("report.md.j2").render(
        headline=Markdown(headline),
        run=run,
        judge=judge.get("name") if judge is not None and judge.get("name") else None,
        calibration=run.calibration,
        rows=run.summary_rows(base),
        baseline=base,
        review=Markdown(review),
        decision=None
        if decision is None
        else Markdown(md_code(decision, limit=400, in_table=False)),
        failed=failed,
        diagnosis=None if run.diagnosis is None else diagnosis_lines(run.diagnosis),
        worst=run.worst(worst) if worst > 0 else [],
    )
