"""The HTML report's evidence of one sample: its own text with what the metrics found
marked in it, and each metric's evidence laid out as the metric says (MetricSpec.table,
MetricSpec.notes). This module picks what to show; templates/evidence.html.j2 writes it,
escaping every value (templating.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from localeval.metrics import spec
from localeval.metrics.base import EvidenceTable
from localeval.reports.templating import macro
from localeval.results import view

TEMPLATE = "evidence.html.j2"


def _marking(details: Mapping[str, Any], where: str) -> tuple[EvidenceTable, Any] | None:
    """The metric whose evidence marks items in the sample's `where` ("answer" or
    "contexts"), with its details."""
    for metric, detail in details.items():
        found = spec(str(metric))
        if found and found.table and found.table.marks == where and isinstance(detail, dict):
            return found.table, detail
    return None


def inputs(sample: Mapping[str, Any], details: Mapping[str, Any]) -> Markup:
    """The sample's question, answer (unsupported statements marked), reference, contexts."""
    answer, contexts = sample.get("answer"), sample.get("contexts")
    pieces = (
        _answer_pieces(answer, _marking(details, "answer")) if isinstance(answer, str) else None
    )
    chunks = (
        _chunks(contexts, _marking(details, "contexts")) if isinstance(contexts, list) else None
    )
    return macro(TEMPLATE, "inputs")(sample, pieces, chunks)


def _chunks(contexts: list[Any], marking: tuple[EvidenceTable, Any] | None) -> list[dict[str, Any]]:
    """The chunks, those judged not useful greyed, each with its verdict."""
    table, detail = marking if marking is not None else (None, {})
    verdicts = detail.get(table.verdicts) if table else None
    values = detail.get(table.values) if table else None
    good = {"useful": "useful", "not useful": "useless"}
    chunks = []
    for index, chunk in enumerate(contexts):
        verdict, p = view.item(verdicts, index), view.item(values, index)
        known = verdict in good
        chunks.append(
            {
                "css": good[verdict] if known else "",
                "verdict": verdict if known else None,
                "tone": "good" if verdict == "useful" else "bad",
                "p": view.fmt(p, 2),
                "text": chunk,
            }
        )
    return chunks


def _answer_pieces(
    answer: str, marking: tuple[EvidenceTable, Any] | None
) -> list[tuple[str, str | None]]:
    """The answer in pieces: each statement judged unsupported with its support (to be
    marked), the text between them with None."""
    if marking is None:
        return [(answer, None)]
    table, detail = marking
    statements, verdicts = detail.get(table.items), detail.get(table.verdicts)
    support = detail.get(table.values)
    if not isinstance(statements, list) or not isinstance(verdicts, list):
        return [(answer, None)]
    pieces: list[tuple[str, str | None]] = []
    position = 0
    for index, (statement, verdict) in enumerate(zip(statements, verdicts, strict=False)):
        if verdict != table.bad or not isinstance(statement, str) or not statement:
            continue
        found = answer.find(statement, position)
        if found < 0:
            continue
        pieces.append((answer[position:found], None))
        pieces.append((statement, view.fmt(view.item(support, index), 2)))
        position = found + len(statement)
    pieces.append((answer[position:], None))
    return pieces


def metric_details(metric: str, details: Any, score: Any) -> Markup:
    """One metric's evidence for a sample: its notes, its tables, then anything else."""
    block = macro(TEMPLATE, "metric_block")
    if not isinstance(details, dict):
        return block(metric, score, None, [], [], details, True)
    rest = dict(details)
    undefined = rest.pop("undefined_reason") if "undefined_reason" in rest else None
    notes = []
    described = spec(metric)
    if described is not None and described.notes is not None:
        for note in described.notes(rest):
            if note.text:
                notes.append(note)
            for key in note.consumes:
                rest.pop(key, None)
    tables = []
    if described is not None:
        own = (described.table,) if described.table is not None else ()
        tables = [_statement_table(table, rest) for table in own + described.extra_tables]
    return block(metric, score, undefined, notes, tables, rest, False)


def _statement_table(table: EvidenceTable, details: dict[str, Any]) -> dict[str, Any]:
    """A table of the metric's items with their verdict and probability (popped from details)."""
    chunks = not table.items
    items = details.get(table.items) if table.items else None
    verdicts = details.get(table.verdicts)
    probs = details.get(table.values)
    rows_count = max(
        len(x) if isinstance(x, list) else 0
        for x in (items, verdicts if table.bad else None, probs)
    )
    if rows_count:
        for key in (table.items, table.values, *([table.verdicts] if table.bad else [])):
            details.pop(key, None)
    rows = []
    for index in range(rows_count):
        item, verdict = view.item(items, index), view.item(verdicts, index)
        rows.append(
            {
                "index": index + 1,
                "label": f"chunk {index + 1}" if chunks else item,
                "verdict": verdict,
                "low": bool(table.bad) and verdict == table.bad,
                "prob": view.item(probs, index),
            }
        )
    return {
        "chunks": chunks,
        "noun": table.noun,
        "column": table.values,
        "has_verdicts": bool(table.bad),
        "rows": rows,
    }
