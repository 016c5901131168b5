"""The HTML report's evidence of one sample: its own text with what the metrics found
marked in it, and each metric's evidence laid out as the metric says (MetricSpec.table,
MetricSpec.notes). Every string from the results file is escaped."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from localeval.metrics import spec
from localeval.metrics.base import EvidenceTable
from localeval.results import view
from localeval.text import neutralised

#: how deep generic details (of metrics without a layout of their own) are drawn
GENERIC_DEPTH = 4


def e(value: Any) -> str:
    """Any value as HTML text or an attribute value: escaped, and with the characters that
    could hide or reorder what the reader sees (a bidi override) as a placeholder."""
    return html.escape(neutralised(view.text(value)), quote=True)


def _marking(details: Mapping[str, Any], where: str) -> tuple[EvidenceTable, Any] | None:
    """The metric whose evidence marks items in the sample's `where` ("answer" or
    "contexts"), with its details."""
    for metric, detail in details.items():
        found = spec(str(metric))
        if found and found.table and found.table.marks == where and isinstance(detail, dict):
            return found.table, detail
    return None


def inputs(sample: Mapping[str, Any], details: Mapping[str, Any]) -> str:
    """The sample's question, answer (unsupported statements marked), reference, contexts."""
    parts = []
    if isinstance(sample.get("question"), str):
        parts.append(f'<h3>Question</h3><div class="text">{e(sample["question"])}</div>')
    if isinstance(sample.get("answer"), str):
        marked = _marked_answer(sample["answer"], _marking(details, "answer"))
        parts.append(f'<h3>Answer</h3><div class="text">{marked}</div>')
    if isinstance(sample.get("reference_answer"), str):
        parts.append(
            f'<h3>Reference answer</h3><div class="text">{e(sample["reference_answer"])}</div>'
        )
    contexts = sample.get("contexts")
    if isinstance(contexts, list):
        chunks = _marked_chunks(contexts, _marking(details, "contexts"))
        parts.append(f'<h3>Retrieved contexts</h3><ol class="chunks">{chunks}</ol>')
    return "".join(parts)


def _marked_chunks(contexts: list[Any], marking: tuple[EvidenceTable, Any] | None) -> str:
    """The chunks, those judged not useful greyed, each with its verdict."""
    table, detail = marking if marking is not None else (None, {})
    verdicts = detail.get(table.verdicts) if table else None
    values = detail.get(table.values) if table else None
    good = {"useful": "useful", "not useful": "useless"}
    items = []
    for index, chunk in enumerate(contexts):
        verdict, p = view.item(verdicts, index), view.item(values, index)
        css, tag = "", ""
        if verdict in good:
            css = good[verdict]
            tag = (
                f'<span class="tag {"good" if verdict == "useful" else "bad"}">'
                f"{e(verdict)} {view.fmt(p, 2)}</span>"
            )
        items.append(f'<li class="{css}">{tag}<div class="text">{e(chunk)}</div></li>')
    return "".join(items)


def _marked_answer(answer: str, marking: tuple[EvidenceTable, Any] | None) -> str:
    """The answer with each statement judged unsupported wrapped in <mark>."""
    if marking is None:
        return e(answer)
    table, detail = marking
    statements, verdicts = detail.get(table.items), detail.get(table.verdicts)
    support = detail.get(table.values)
    if not isinstance(statements, list) or not isinstance(verdicts, list):
        return e(answer)
    out, position = [], 0
    for index, (statement, verdict) in enumerate(zip(statements, verdicts, strict=False)):
        if verdict != table.bad or not isinstance(statement, str) or not statement:
            continue
        found = answer.find(statement, position)
        if found < 0:
            continue
        p = view.item(support, index)
        out.append(e(answer[position:found]))
        out.append(
            f'<mark class="unsupported" title="unsupported by the contexts (support '
            f'{view.fmt(p, 2)})">{e(statement)}</mark>'
        )
        position = found + len(statement)
    out.append(e(answer[position:]))
    return "".join(out)


def metric_details(metric: str, details: Any, score: Any) -> str:
    head = f"<h3>{e(metric)}: {view.fmt(score)}</h3>"
    if not isinstance(details, dict):
        return f'<div class="metric-block">{head}{_generic(details, 0)}</div>'
    rest = dict(details)
    parts = [head]
    if "undefined_reason" in rest:
        parts.append(f"<p>Undefined: {e(rest.pop('undefined_reason'))}</p>")
    described = spec(metric)
    if described is not None and described.notes is not None:
        for note in described.notes(rest):
            if note.text:
                parts.append(
                    f'<p class="low">{e(note.text)}</p>' if note.low else f"<p>{e(note.text)}</p>"
                )
            for key in note.consumes:
                rest.pop(key, None)
    if described is not None:
        tables = (described.table,) if described.table is not None else ()
        parts += [_statement_table(table, rest) for table in tables + described.extra_tables]
    if rest:
        parts.append(_generic(rest, 0))
    return f'<div class="metric-block">{"".join(parts)}</div>'


def _statement_table(table: EvidenceTable, details: dict[str, Any]) -> str:
    """A table of the metric's items with their verdict and probability (popped from details)."""
    chunks = not table.items
    items = details.get(table.items) if table.items else None
    verdicts = details.get(table.verdicts)
    probs = details.get(table.values)
    rows_count = max(
        len(x) if isinstance(x, list) else 0
        for x in (items, verdicts if table.bad else None, probs)
    )
    if rows_count == 0:
        return ""
    for key in (table.items, table.values, *([table.verdicts] if table.bad else [])):
        details.pop(key, None)
    rows = []
    for index in range(rows_count):
        item, verdict = view.item(items, index), view.item(verdicts, index)
        prob = view.item(probs, index)
        low = table.bad and verdict == table.bad
        label = f"chunk {index + 1}" if chunks else e(item)
        cells = [f'<td class="num">{index + 1}</td>'] if not chunks else []
        cells.append(f"<td>{label}</td>")
        if table.bad:
            cells.append(f"<td>{e(verdict) if verdict is not None else '-'}</td>")
        cells.append(f'<td class="num">{view.fmt(prob)}</td>')
        rows.append(f"<tr{' class=bad' if low else ''}>{''.join(cells)}</tr>")
    head = ("" if chunks else "<th>#</th>") + f"<th>{e(table.noun)}</th>"
    if table.bad:
        head += "<th>verdict</th>"
    head += f"<th>{e(table.values)}</th>"
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(rows)}</table></div>'


def _generic(value: Any, depth: int) -> str:
    """Any JSON value as nested lists, every string escaped (for metrics without a layout)."""
    if depth >= GENERIC_DEPTH:
        return e(value)
    if isinstance(value, dict):
        items = "".join(
            f"<dt>{e(key)}</dt><dd>{_generic(item, depth + 1)}</dd>" for key, item in value.items()
        )
        return f'<dl class="generic">{items}</dl>'
    if isinstance(value, list):
        if (
            all(not isinstance(x, dict | list) for x in value)
            and sum(len(view.text(x)) for x in value) < 120
        ):
            return e(", ".join(view.text(x) for x in value))
        return "<ol>" + "".join(f"<li>{_generic(x, depth + 1)}</li>" for x in value) + "</ol>"
    if isinstance(value, float):
        return e(round(value, 4))
    return e(value)
