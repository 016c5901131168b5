"""Rows of a CSV data file as the JSON rows of a JSONL file would be: a dict per row, with
`contexts` decoded from its JSON array string and empty cells left out."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from localeval.data import strict_json
from localeval.data.fields import ALIASES
from localeval.errors import DatasetError

#: what a row generator yields: the line a row starts on, and the decoded row or the error
#: that makes it unusable (a row-level error the caller may skip)
Row = tuple[int, Any]


def _csv_header(path: Path, reader: Any) -> list[str]:
    try:
        header = [name.strip() for name in next(reader)]
    except StopIteration:
        return []
    except csv.Error as exc:
        raise DatasetError(str(path), f"invalid CSV ({exc})", 1) from None
    named = [name for name in header if name]
    for name in named:
        if named.count(name) > 1:
            raise DatasetError(str(path), f"the header names the column '{name}' twice", 1)
    return header


def csv_rows(path: Path, lines: Iterator[str]) -> Iterator[Row]:
    """CSV rows as dicts; `contexts` holds a JSON array string; empty cells are missing fields.

    Quoted cells may span lines; a row's line is the one it starts on.
    """
    # lines keep their ends, so cells may span lines; strict mode reports a quote that is
    # never closed instead of swallowing the rest of the file
    reader = csv.reader(lines, strict=True)
    # the csv module's own cell limit (128 KiB) would hide MAX_FIELD_CHARS's clearer message
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    header = _csv_header(path, reader)
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            detail = str(exc)
            if "unexpected end of data" in detail:
                detail = "a quoted cell is never closed"
            raise DatasetError(str(path), f"invalid CSV ({detail})", start) from None
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            yield (
                line,
                DatasetError(
                    str(path), f"has {len(cells)} cells, the header has {len(header)}", line
                ),
            )
            continue
        yield line, _csv_row(path, header, cells, line)


def _csv_row(path: Path, header: list[str], cells: list[str], line: int) -> Any:
    row: dict[str, Any] = {}
    for column, (name, cell) in enumerate(zip(header, cells, strict=True), start=1):
        if cell == "":
            continue
        if not name:
            return DatasetError(
                str(path), f"has a value in column {column}, which the header leaves unnamed", line
            )
        if ALIASES.get(name, name) == "contexts":
            try:
                cell = strict_json.DECODER.decode(cell)
            except strict_json.DECODE_ERRORS:
                return DatasetError(
                    str(path), "must be a JSON array of strings in a CSV cell", line, "contexts"
                )
        row[name] = cell
    return row


def cell_number(cell: str, kind: type[int] | type[float] = float) -> int | float | str:
    """The number a CSV cell holds (every CSV value is text), or the cell itself when it
    holds none, left for the caller's check to name."""
    try:
        return kind(cell.strip())
    except ValueError:
        return cell
