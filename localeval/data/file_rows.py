"""The rows of a data file, decoded by its format (JSONL, a JSON array, CSV; gzip-compressed
or not), read piece by piece so that memory does not grow with the file. A row that cannot
be decoded comes as its DatasetError, for the caller to stop at or skip
(localeval.data.samples checks what the rows hold)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from localeval.data import strict_json
from localeval.data.csv_rows import Row, csv_rows
from localeval.data.textstream import json_array_values, text_chunks, text_lines
from localeval.errors import DatasetError


def _row_error(path: Path, exc: BaseException, line: int, text: str = "") -> DatasetError:
    message, name = strict_json.describe(exc, text)
    return DatasetError(str(path), message, line, name)


def _jsonl_rows(path: Path, lines: Iterator[str]) -> Iterator[Row]:
    for number, raw_line in enumerate(lines, start=1):
        # without its line end (columns count within the line), and without a byte-order
        # mark where files were joined with cat
        raw_line = raw_line.rstrip("\r\n").lstrip("\ufeff")
        if not raw_line.strip():
            continue
        try:
            yield number, strict_json.DECODER.decode(raw_line)
        except strict_json.DECODE_ERRORS as exc:
            yield number, _row_error(path, exc, number, raw_line)


def _json_array_rows(path: Path, chunks: Iterator[str]) -> Iterator[Row]:
    return json_array_values(
        path,
        chunks,
        strict_json.DECODER,
        lambda exc, line: _row_error(path, exc, line),
    )


#: the data files read_samples knows, by (lower-case) suffix; each may also end in .gz
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}


def format_suffix(file: Path) -> tuple[str, bool]:
    """The file's format suffix in lower case ('.jsonl' of 'a.JSONL.gz') and whether its
    name says it is gzip-compressed."""
    suffixes = [s.lower() for s in file.suffixes]
    compressed = bool(suffixes) and suffixes[-1] == ".gz"
    suffix = (suffixes[-2] if len(suffixes) > 1 else "") if compressed else file.suffix.lower()
    return suffix, compressed


def file_rows(file: Path) -> tuple[str, Iterator[Row]]:
    """The file's format and its rows, read piece by piece (memory does not grow with it)."""
    suffix, compressed = format_suffix(file)
    suffixes = [s.lower() for s in file.suffixes]
    kind = FORMATS.get(suffix)
    if str(file) == "-":  # `evaluate -` spools standard input to a file before reading it
        raise DatasetError("-", "standard input is read by `localeval evaluate` only; give a file")
    if kind is None:
        if file.is_dir():
            raise DatasetError(str(file), "is a directory, not a data file")
        shown = "".join(suffixes[-2:]) if compressed else file.suffix.lower()
        raise DatasetError(
            str(file), f"unknown file type '{shown}' (use .jsonl, .json or .csv, or .gz of one)"
        )
    chunks = text_chunks(file, compressed)
    if kind == "jsonl":
        return kind, _jsonl_rows(file, text_lines(chunks))
    if kind == "json":
        return kind, _json_array_rows(file, chunks)
    return kind, csv_rows(file, text_lines(chunks))
