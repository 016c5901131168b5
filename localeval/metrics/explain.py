"""Why a sample's score moved between two runs, read from the two runs' stored evidence.

Each metric keeps its evidence in the sample's details (statements with support
probabilities, per-chunk usefulness, generated questions). `explain_change` lines the two
up and says, in a few lines, what changed: which statement lost support, which chunk
became irrelevant, whether the answer turned noncommittal. Metrics without an explainer
here get the generic one: the detail fields whose values differ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_LINES = 3
#: a probability that moved this much is worth a line even without crossing 0.5
NOTABLE_SHIFT = 0.25
_QUOTE_CHARS = 90

Details = dict[str, Any]


def _quote(text: Any) -> str:
    text = " ".join(str(text).split())
    return f'"{text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 3] + "..."}"'


def _pairs(details: Details | None, items: str, probabilities: str) -> list[tuple[Any, float]]:
    if not details:
        return []
    names, values = details.get(items), details.get(probabilities)
    if not isinstance(names, list) or not isinstance(values, list):
        return []
    return [
        (n, float(v)) for n, v in zip(names, values, strict=False) if isinstance(v, int | float)
    ]


def _notable(before: float, after: float) -> bool:
    return (before >= 0.5) != (after >= 0.5) or abs(after - before) >= NOTABLE_SHIFT


def _statements(
    items: str, probabilities: str, noun: str, yes: str, no: str, lost: str, gained: str, gone: str
) -> Callable[[Details | None, Details | None], list[tuple[float, str]]]:
    """Explainer for metrics that judge a list of statements, matched between runs by text.
    A statement whose verdict moved comes first, then new statements, then removed ones."""

    def explain(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
        before = dict(_pairs(base, items, probabilities))
        after = _pairs(new, items, probabilities)
        lines: list[tuple[float, str]] = []
        for statement, p in after:
            if statement in before:
                q = before[statement]
                if _notable(q, p):
                    moved = lost if p < q else gained
                    text = f"{noun} {moved}: {_quote(statement)} ({q:.2f} -> {p:.2f})"
                    lines.append((2.0 + abs(p - q), text))
            else:
                verdict = yes if p >= 0.5 else no
                text = f"new {verdict} {noun} ({p:.2f}): {_quote(statement)}"
                lines.append((1.0 + abs(p - 0.5), text))
        now = {statement for statement, _ in after}
        for statement, q in before.items():
            if statement not in now:
                verdict = yes if q >= 0.5 else no
                lines.append((0.5, f"{noun} {gone} (was {verdict}, {q:.2f}): {_quote(statement)}"))
        return lines

    return explain


def _chunks(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
    before = [p for _, p in _pairs(base, "verdicts", "usefulness")]
    after = [p for _, p in _pairs(new, "verdicts", "usefulness")]
    lines: list[tuple[float, str]] = []
    if base and new and base.get("judged_against") != new.get("judged_against"):
        lines.append(
            (
                1.0,
                f"chunks judged against the {new.get('judged_against')} "
                f"(before: the {base.get('judged_against')})",
            )
        )
    if len(before) != len(after):
        lines.append((1.0, f"{len(after)} chunks retrieved (before: {len(before)})"))
    for rank, (q, p) in enumerate(zip(before, after, strict=False), start=1):
        if (q >= 0.5) != (p >= 0.5):
            state = "became useful" if p >= 0.5 else "became irrelevant"
        elif abs(p - q) >= NOTABLE_SHIFT:
            state = "more useful" if p > q else "less useful"
        else:
            continue
        lines.append((abs(p - q), f"chunk {rank} {state} ({q:.2f} -> {p:.2f})"))
    return lines


def _questions(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
    lines: list[tuple[float, str]] = []
    if not base or not new:
        return lines
    q, p = base.get("noncommittal_probability"), new.get("noncommittal_probability")
    if isinstance(q, int | float) and isinstance(p, int | float) and (q >= 0.5) != (p >= 0.5):
        state = "noncommittal" if p >= 0.5 else "committal"
        lines.append((1.0, f"answer judged {state} ({q:.2f} -> {p:.2f})"))
    q, p = base.get("answers_probability"), new.get("answers_probability")
    if isinstance(q, int | float) and isinstance(p, int | float) and abs(p - q) > 1e-9:
        lines.append((abs(p - q), f"judge's P(the answer answers the question) {q:.2f} -> {p:.2f}"))
    old = _pairs(base, "generated_questions", "similarities")
    now = _pairs(new, "generated_questions", "similarities")
    if now and old:
        old_mean = sum(s for _, s in old) / len(old)
        new_mean = sum(s for _, s in now) / len(now)
        if abs(new_mean - old_mean) > 1e-9:
            question, similarity = min(now, key=lambda pair: pair[1])
            text = (
                f"generated questions now {new_mean:.2f} similar to the question (before "
                f"{old_mean:.2f}); least similar: {_quote(question)} ({similarity:.2f})"
            )
            lines.append((abs(new_mean - old_mean), text))
    return lines


def _generic(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
    """Fields whose plain values differ, for metrics without an explainer of their own."""
    base, new = base or {}, new or {}
    lines = []
    for key in dict.fromkeys([*base, *new]):
        if key == "undefined_reason":
            continue
        old, now = base.get(key), new.get(key)
        if old != now and not isinstance(old, dict | list) and not isinstance(now, dict | list):
            lines.append((0.0, f"{key}: {_quote(old)} -> {_quote(now)}"))
    return lines


EXPLAINERS: dict[str, Callable[[Details | None, Details | None], list[tuple[float, str]]]] = {
    "faithfulness": _statements(
        "statements",
        "support",
        noun="statement",
        yes="supported",
        no="unsupported",
        lost="lost support",
        gained="gained support",
        gone="no longer in the answer",
    ),
    "context_recall": _statements(
        "statements",
        "attribution",
        noun="reference statement",
        yes="attributed",
        no="unattributed",
        lost="no longer found in the contexts",
        gained="now found in the contexts",
        gone="no longer in the reference",
    ),
    "context_precision": _chunks,
    "answer_relevancy": _questions,
}


def explain_change(metric: str, base: Details | None, new: Details | None) -> list[str]:
    """A few lines on what changed in a sample's evidence, most important first."""
    base_reason = (base or {}).get("undefined_reason")
    new_reason = (new or {}).get("undefined_reason")
    if new_reason and not base_reason:
        return [f"now undefined: {new_reason}"]
    if base_reason and not new_reason:
        return [f"was undefined: {base_reason}"]
    lines = EXPLAINERS.get(metric, _generic)(base, new)
    lines.sort(key=lambda line: -line[0])  # stable: equal weights keep their order
    text = [line for _, line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        text.append(f"... and {len(lines) - MAX_LINES} more")
    return text
