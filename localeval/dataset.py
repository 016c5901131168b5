"""Reading evaluation samples from JSONL, JSON (an array) or CSV files.

Every row is checked before any model is loaded; a problem stops the run with a
DatasetError that names the file, the line and the field. Field aliases let Ragas-style
datasets load unchanged (SPEC.md). Fields localeval does not know are kept in
`Sample.extra` (labels for `calibrate`, `answer_a`/`answer_b` for A/B comparison, ...).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import DatasetError
from localeval.textstream import json_array_values, text_chunks, text_lines

#: accepted alias -> canonical field name
ALIASES: dict[str, str] = {
    "user_input": "question",
    "retrieved_contexts": "contexts",
    "response": "answer",
    "reference": "reference_answer",
    "ground_truth": "reference_answer",
    "id": "sample_id",
}
CANONICAL = ("question", "contexts", "answer", "reference_answer", "sample_id", "category")


@dataclass(frozen=True)
class Sample:
    """One evaluation sample: a question, what was retrieved for it, and what was answered."""

    sample_id: str
    question: str
    contexts: list[str] | None = None
    answer: str | None = None
    reference_answer: str | None = None
    category: str | None = None
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _canonical_fields(raw: dict[str, Any], path: str, line: int) -> dict[str, Any]:
    """Map aliases onto canonical names; a field given twice with different values is an error."""
    fields: dict[str, Any] = {}
    source_name: dict[str, str] = {}
    extra: dict[str, Any] = {}
    for key, value in raw.items():
        name = ALIASES.get(key, key)
        if name not in CANONICAL:
            extra[key] = value
            continue
        if name in fields and fields[name] != value:
            raise DatasetError(
                path,
                f"given twice, as '{source_name[name]}' and as '{key}', with different values",
                line,
                name,
            )
        fields[name] = value
        source_name[name] = key
    fields["extra"] = extra
    return fields


def _optional_text(fields: dict[str, Any], name: str, path: str, line: int) -> str | None:
    value = fields.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise DatasetError(path, f"must be a string, got {_kind(value)}", line, name)
    return value


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def sample_from_row(raw: Any, path: str, line: int) -> Sample:
    """Validate one decoded row and build a Sample from it."""
    if not isinstance(raw, dict):
        raise DatasetError(path, f"each row must be a JSON object, got {_kind(raw)}", line)
    fields = _canonical_fields(raw, path, line)

    question = fields.get("question")
    if question is None:
        raise DatasetError(path, "missing (also accepted as 'user_input')", line, "question")
    if not isinstance(question, str):
        raise DatasetError(path, f"must be a string, got {_kind(question)}", line, "question")
    if not question.strip():
        raise DatasetError(path, "is empty", line, "question")

    contexts = fields.get("contexts")
    if contexts is not None:
        if not isinstance(contexts, list):
            raise DatasetError(
                path, f"must be a list of strings, got {_kind(contexts)}", line, "contexts"
            )
        for index, chunk in enumerate(contexts):
            if not isinstance(chunk, str):
                raise DatasetError(
                    path, f"item {index} must be a string, got {_kind(chunk)}", line, "contexts"
                )

    sample_id = fields.get("sample_id")
    if sample_id is None:
        sample_id = str(line)
    elif isinstance(sample_id, bool) or not isinstance(sample_id, str | int):
        raise DatasetError(
            path, f"must be a string or an integer, got {_kind(sample_id)}", line, "sample_id"
        )
    elif isinstance(sample_id, str) and not sample_id.strip():
        raise DatasetError(path, "is empty", line, "sample_id")

    return Sample(
        sample_id=str(sample_id),
        question=question,
        contexts=contexts,
        answer=_optional_text(fields, "answer", path, line),
        reference_answer=_optional_text(fields, "reference_answer", path, line),
        category=_optional_text(fields, "category", path, line),
        line=line,
        extra=fields["extra"],
    )


def _jsonl_rows(path: Path, lines: Iterator[str]) -> Iterator[tuple[int, Any]]:
    for number, raw_line in enumerate(lines, start=1):
        if not raw_line.strip():
            continue
        try:
            yield number, json.loads(raw_line)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                str(path), f"invalid JSON ({exc.msg}, column {exc.colno})", number
            ) from None


def _csv_rows(path: Path, lines: Iterator[str]) -> Iterator[tuple[int, Any]]:
    """CSV rows as dicts; `contexts` holds a JSON array string; empty cells are missing fields."""
    reader = csv.reader(lines)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        raise DatasetError(str(path), f"invalid CSV ({exc})", 1) from None
    header = [name.strip() for name in header]
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DatasetError(str(path), f"invalid CSV ({exc})", start) from None
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise DatasetError(
                str(path), f"has {len(cells)} cells, the header has {len(header)}", line
            )
        row: dict[str, Any] = {}
        for name, cell in zip(header, cells, strict=True):
            if cell == "":
                continue
            if ALIASES.get(name, name) == "contexts":
                try:
                    cell = json.loads(cell)
                except json.JSONDecodeError:
                    raise DatasetError(
                        str(path), "must be a JSON array of strings in a CSV cell", line, "contexts"
                    ) from None
            row[name] = cell
        yield line, row


def read_samples(path: str | Path) -> Iterator[Sample]:
    """Yield the samples of a file, validating each; raise DatasetError on the first bad row."""
    file = Path(path)
    suffix = file.suffix.lower()
    # the file is read piece by piece, so memory does not grow with its size
    if suffix in (".jsonl", ".ndjson"):
        rows = _jsonl_rows(file, text_lines(text_chunks(file)))
    elif suffix == ".json":
        rows = json_array_values(file, text_chunks(file))
    elif suffix == ".csv":
        rows = _csv_rows(file, text_lines(text_chunks(file)))
    else:
        raise DatasetError(str(file), f"unknown file type '{suffix}' (use .jsonl, .json or .csv)")
    seen: dict[str, int] = {}
    for line, raw in rows:
        sample = sample_from_row(raw, str(file), line)
        if sample.sample_id in seen:
            raise DatasetError(
                str(file),
                f"duplicate sample_id '{sample.sample_id}' (first on line "
                f"{seen[sample.sample_id]})",
                line,
                "sample_id",
            )
        seen[sample.sample_id] = line
        yield sample


def load_samples(path: str | Path) -> list[Sample]:
    """All samples of a file, validated; raises DatasetError if any row is bad or there are none."""
    samples = list(read_samples(path))
    if not samples:
        raise DatasetError(str(path), "holds no samples")
    return samples
