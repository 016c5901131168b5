"""The pieces metrics explain their evidence with: what changed between two runs
(`Explainer`s, see MetricSpec.explain) and why a sample scored low (MetricSpec.hint).

Each metric keeps its evidence in the sample's details (statements with support
probabilities, per-chunk usefulness, generated questions); these helpers line two runs'
details up, or pick the telling item out of one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from localeval.metrics.base import Details, Evidence, Explainer

#: a probability that moved this much is worth a line even without crossing 0.5
NOTABLE_SHIFT = 0.25
_QUOTE_CHARS = 90


def quote(text: Any) -> str:
    text = " ".join(str(text).split())
    return f'"{text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 3] + "..."}"'


def pairs(details: Details | None, items: str, probabilities: str) -> list[tuple[Any, float]]:
    """(item, probability) for each item of the details that has a number."""
    if not details:
        return []
    names, values = details.get(items), details.get(probabilities)
    if not isinstance(names, list) or not isinstance(values, list):
        return []
    return [
        (n, float(v)) for n, v in zip(names, values, strict=False) if isinstance(v, int | float)
    ]


def notable(before: float, after: float) -> bool:
    return (before >= 0.5) != (after >= 0.5) or abs(after - before) >= NOTABLE_SHIFT


@dataclass(frozen=True)
class StatementWords:
    """How a statement-checking metric's changes are put in words."""

    noun: str  # "statement"
    yes: str  # its verdict at >= 0.5: "supported"
    no: str
    lost: str  # "lost support"
    gained: str
    gone: str  # "no longer in the answer"


def statement_changes(items: str, probabilities: str, words: StatementWords) -> Explainer:
    """Explainer for metrics that judge a list of statements, matched between runs by text.
    A statement whose verdict moved comes first, then new statements, then removed ones."""

    def explain(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
        before = dict(pairs(base, items, probabilities))
        after = pairs(new, items, probabilities)
        lines: list[tuple[float, str]] = []
        for statement, p in after:
            if statement in before:
                q = before[statement]
                if notable(q, p):
                    moved = words.lost if p < q else words.gained
                    text = f"{words.noun} {moved}: {quote(statement)} ({q:.2f} -> {p:.2f})"
                    lines.append((2.0 + abs(p - q), text))
            else:
                verdict = words.yes if p >= 0.5 else words.no
                text = f"new {verdict} {words.noun} ({p:.2f}): {quote(statement)}"
                lines.append((1.0 + abs(p - 0.5), text))
        now = {statement for statement, _ in after}
        for statement, q in before.items():
            if statement not in now:
                verdict = words.yes if q >= 0.5 else words.no
                text = f"{words.noun} {words.gone} (was {verdict}, {q:.2f}): {quote(statement)}"
                lines.append((0.5, text))
        return lines

    return explain


def generic_changes(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
    """Fields whose plain values differ, for metrics without an explainer of their own."""
    base, new = base or {}, new or {}
    lines = []
    for key in dict.fromkeys([*base, *new]):
        if key == "undefined_reason":
            continue
        old, now = base.get(key), new.get(key)
        if old != now and not isinstance(old, dict | list) and not isinstance(now, dict | list):
            lines.append((0.0, f"{key}: {quote(old)} -> {quote(now)}"))
    return lines


def number(value: Any) -> float | None:
    """A finite float, or None for anything else (None, text, booleans, NaN): details may
    come from a results file of another machine or version."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    result = float(value)
    return result if math.isfinite(result) else None


def text(value: Any) -> str:
    """Any JSON value as display text (renderers escape it)."""
    return "" if value is None else value if isinstance(value, str) else str(value)


def first_with(
    details: Details, verdict: str, key: str = "statements", verdicts_key: str = "verdicts"
) -> str | None:
    """The first item whose verdict is `verdict`."""
    verdicts, items = details.get(verdicts_key), details.get(key)
    if not isinstance(verdicts, list) or not isinstance(items, list):
        return None
    for item, label in zip(items, verdicts, strict=False):
        if label == verdict:
            return text(item)
    return None


def statement_hint(
    bad: str, says: str, values: str, least: str
) -> Callable[[Details], Evidence | None]:
    """The hint of a statement-checking metric: the first statement with the `bad` verdict
    (labelled `says`), else the one with the lowest probability (labelled `least`)."""

    def hint(details: Details) -> Evidence | None:
        statement = first_with(details, bad)
        if statement is not None:
            return Evidence(says, statement)
        return weakest(details, values, least)

    return hint


def weakest(details: Details, key: str, label: str) -> Evidence | None:
    """The statement with the lowest probability, when none was judged outright bad."""
    statements, probabilities = details.get("statements"), details.get(key)
    if not isinstance(statements, list) or not isinstance(probabilities, list):
        return None
    scored = [
        (p, text(s))
        for s, raw in zip(statements, probabilities, strict=False)
        if (p := number(raw)) is not None
    ]
    if not scored:
        return None
    probability, statement = min(scored)
    return Evidence(f"{label} ({probability:.2f})", statement)
