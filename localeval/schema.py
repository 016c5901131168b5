"""Typed output schemas for the judge, compiled to llama.cpp grammars with a proven size bound.

A schema here is deliberately small: objects with fixed keys in a fixed order, strings with
a character limit, enums, booleans, bounded integers and bounded arrays. No whitespace is
allowed between tokens and strings cannot contain quotes or backslashes, so every output
the grammar admits is valid JSON of a known maximum length in bytes. Each token llama.cpp
samples under a grammar adds at least one byte, so generating `max_bytes + 1` tokens
(the last one end-of-generation) can never truncate an answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from localeval.errors import JudgeError

# Any character JSON allows unescaped, except the quote and the backslash.
_STRING_CHAR = r'[^"\\\x00-\x1f\x7f]'
# The longest UTF-8 encoding of one character.
_MAX_CHAR_BYTES = 4


@dataclass(frozen=True)
class Str:
    """A string of `min_chars` to `max_chars` characters (no quotes, backslashes or controls)."""

    max_chars: int
    min_chars: int = 1


@dataclass(frozen=True)
class Enum:
    """One of a fixed set of strings."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class Bool:
    """true or false."""


@dataclass(frozen=True)
class Int:
    """An integer from `low` to `high`, both >= 0."""

    low: int
    high: int


@dataclass(frozen=True)
class Array:
    """`min_items` to `max_items` items of one schema."""

    item: Schema
    min_items: int
    max_items: int


@dataclass(frozen=True)
class Object:
    """Keys in this order, each with its schema; all required."""

    fields: tuple[tuple[str, Schema], ...]


Schema = Str | Enum | Bool | Int | Array | Object


def _literal(text: str) -> str:
    return json.dumps(text)  # a GBNF literal uses the same escapes as a JSON string


class _GrammarBuilder:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def rule(self, schema: Schema, name: str) -> str:
        if isinstance(schema, Str):
            body = f'"\\"" {_STRING_CHAR}{{{schema.min_chars},{schema.max_chars}}} "\\""'
        elif isinstance(schema, Enum):
            body = " | ".join(_literal(json.dumps(v)) for v in schema.values)
        elif isinstance(schema, Bool):
            body = '"true" | "false"'
        elif isinstance(schema, Int):
            body = " | ".join(_literal(str(v)) for v in range(schema.high, schema.low - 1, -1))
        elif isinstance(schema, Array):
            item = self.rule(schema.item, f"{name}-item")
            if schema.max_items == 0:
                body = '"[]"'
            else:
                rest = f'("," {item}){{{max(schema.min_items - 1, 0)},{schema.max_items - 1}}}'
                first = f"{item} {rest}"
                body = f'"[" {first} "]"' if schema.min_items > 0 else f'"[" ({first})? "]"'
        elif isinstance(schema, Object):
            parts: list[str] = []
            for index, (key, value) in enumerate(schema.fields):
                prefix = "{" if index == 0 else ","
                parts.append(_literal(f"{prefix}{json.dumps(key)}:"))
                parts.append(self.rule(value, f"{name}-{_slug(key)}"))
            parts.append('"}"')
            body = " ".join(parts)
        else:  # pragma: no cover - the union above is exhaustive
            raise TypeError(f"not a schema: {schema!r}")
        self.rules[name] = body
        return name


def _slug(key: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in key.lower()) or "key"


def to_gbnf(schema: Schema) -> str:
    """The GBNF grammar (llama.cpp's format) that admits exactly the JSON texts of `schema`."""
    builder = _GrammarBuilder()
    builder.rule(schema, "root")
    return "\n".join(f"{name} ::= {body}" for name, body in builder.rules.items()) + "\n"


def to_json_schema(schema: Schema) -> dict[str, Any]:
    """The JSON Schema of `schema`, for servers that constrain output by JSON Schema (vLLM,
    Ollama): the same bounds as the grammar (string lengths, no quote or backslash, item
    counts, keys in order, no others), so `max_bytes` bounds the output as long as the
    server adds no whitespace."""
    if isinstance(schema, Str):
        return {
            "type": "string",
            "minLength": schema.min_chars,
            "maxLength": schema.max_chars,
            "pattern": "^" + _STRING_CHAR.replace(r"\x", r"\u00") + "*$",
        }
    if isinstance(schema, Enum):
        return {"enum": list(schema.values)}
    if isinstance(schema, Bool):
        return {"type": "boolean"}
    if isinstance(schema, Int):
        return {"type": "integer", "minimum": schema.low, "maximum": schema.high}
    if isinstance(schema, Array):
        return {
            "type": "array",
            "items": to_json_schema(schema.item),
            "minItems": schema.min_items,
            "maxItems": schema.max_items,
        }
    if isinstance(schema, Object):
        return {
            "type": "object",
            "properties": {key: to_json_schema(value) for key, value in schema.fields},
            "required": [key for key, _ in schema.fields],
            "additionalProperties": False,
        }
    raise TypeError(f"not a schema: {schema!r}")


def max_bytes(schema: Schema) -> int:
    """The longest output, in UTF-8 bytes, that `schema`'s grammar admits."""
    if isinstance(schema, Str):
        return 2 + _MAX_CHAR_BYTES * schema.max_chars
    if isinstance(schema, Enum):
        return max(len(json.dumps(v).encode()) for v in schema.values)
    if isinstance(schema, Bool):
        return 5
    if isinstance(schema, Int):
        return len(str(schema.high))
    if isinstance(schema, Array):
        if schema.max_items == 0:
            return 2
        return 2 + schema.max_items * max_bytes(schema.item) + (schema.max_items - 1)
    if isinstance(schema, Object):
        keys = sum(len(json.dumps(k).encode()) + 2 for k, _ in schema.fields)  # {"k": and ,"k":
        return keys + sum(max_bytes(v) for _, v in schema.fields) + 1
    raise TypeError(f"not a schema: {schema!r}")


def parse(schema: Schema, text: str) -> Any:
    """Decode and check an output against its schema; JudgeError if it does not conform.

    Under the grammar this cannot fail; the check guards against a llama.cpp that
    silently ignored the grammar, which would otherwise corrupt scores.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JudgeError(f"judge output is not JSON despite the grammar: {text[:200]!r}") from exc
    _check(schema, value, text)
    return value


def _check(schema: Schema, value: Any, text: str) -> None:
    ok: bool
    if isinstance(schema, Str):
        ok = isinstance(value, str) and schema.min_chars <= len(value) <= schema.max_chars
    elif isinstance(schema, Enum):
        ok = value in schema.values
    elif isinstance(schema, Bool):
        ok = isinstance(value, bool)
    elif isinstance(schema, Int):
        ok = (
            isinstance(value, int)
            and not isinstance(value, bool)
            and (schema.low <= value <= schema.high)
        )
    elif isinstance(schema, Array):
        ok = isinstance(value, list) and schema.min_items <= len(value) <= schema.max_items
        if ok:
            for item in value:
                _check(schema.item, item, text)
    elif isinstance(schema, Object):
        ok = isinstance(value, dict) and list(value) == [k for k, _ in schema.fields]
        if ok:
            for key, sub in schema.fields:
                _check(sub, value[key], text)
    else:  # pragma: no cover
        ok = False
    if not ok:
        raise JudgeError(f"judge output does not match its schema: {text[:200]!r}")


def typical_value(schema: Schema, text: str) -> Any:
    """A value of `schema` whose strings are `text` (cut to fit): what a reply of ordinary
    length looks like, for counting a reply that is not generated (an estimate)."""
    if isinstance(schema, Str):
        return text[: schema.max_chars].ljust(schema.min_chars, "x")
    if isinstance(schema, Enum):
        return schema.values[0]
    if isinstance(schema, Bool):
        return False
    if isinstance(schema, Int):
        return schema.low
    if isinstance(schema, Array):
        count = schema.min_items or min(1, schema.max_items)
        return [typical_value(schema.item, text) for _ in range(count)]
    if isinstance(schema, Object):
        return {key: typical_value(value, text) for key, value in schema.fields}
    raise TypeError(f"not a schema: {schema!r}")
