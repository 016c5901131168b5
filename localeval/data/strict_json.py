"""JSON decoding that refuses what Python's json module accepts but JSON is not, and says
in words what is wrong with a row.

Python's decoder takes NaN and Infinity, keeps the last of two equal keys silently, raises
RecursionError on deep nesting and ValueError on numbers of more than 4,300 digits. Here
NaN/Infinity and repeated keys are errors, and every failure is described in one line.
"""

from __future__ import annotations

import json
from typing import Any


class DuplicateKey(ValueError):
    """A key given twice in one JSON object."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


class NotJSON(ValueError):
    """NaN, Infinity or -Infinity: Python's json reads them, JSON has no such values."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row = dict(pairs)
    if len(row) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return row


def _not_json(constant: str) -> Any:
    raise NotJSON(f"{constant} is not a JSON value")


#: the decoder for data rows
DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys, parse_constant=_not_json)

#: what the decoder may raise for a bad row
DECODE_ERRORS = (ValueError, RecursionError)


def describe(exc: BaseException, line_text: str = "") -> tuple[str, str | None]:
    """(message, field) for a row the decoder refused; `line_text` is the row's whole line
    when the row is one line (JSONL), to tell a row cut short from other syntax errors."""
    if isinstance(exc, DuplicateKey):
        return "given twice in the same row", exc.key
    if isinstance(exc, RecursionError):
        return "invalid JSON (nested too deeply)", None
    if isinstance(exc, NotJSON):
        return f"invalid JSON ({exc})", None
    if isinstance(exc, json.JSONDecodeError):
        unclosed = exc.msg.startswith("Unterminated string")
        if unclosed:
            message = f"invalid JSON (the string at column {exc.colno} is never closed)"
        else:
            message = f"invalid JSON ({exc.msg}, column {exc.colno})"
        if line_text and (unclosed or exc.pos >= len(line_text.rstrip())):
            message += "; the line ends before the row does (cut short, or split over lines?)"
        return message, None
    if "digits" in str(exc):  # int() refuses numbers of more than 4,300 digits
        return "invalid JSON (a number with too many digits)", None
    return f"invalid JSON ({exc})", None
