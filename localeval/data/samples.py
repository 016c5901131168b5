"""Reading evaluation samples from JSONL, JSON (an array) or CSV files, gzip-compressed or
not (`.jsonl.gz`, ...).

Every row is checked before any model is loaded; a problem stops the run with a
DatasetError that names the file, the line and the field, or, when the caller passes
`on_invalid`, skips the row and reports it there (in a JSON array, by its row number as
well: a minified array is one line). A row without a `sample_id` is named from its
question (localeval.data.ids). Field aliases let Ragas-style
datasets load unchanged (docs/reference.md). Fields localeval does not know are kept in
`Sample.extra` (labels for `calibrate`, `answer_a`/`answer_b` for A/B comparison, ...)
and reported once per file to `on_warning`, with a suggestion when one looks like a typo.

What is accepted, beyond plain valid rows (tests/bad_inputs/ holds one file per case):
a UTF-8 byte-order mark at the start of the file or of any line (files joined with
`cat`); blank lines; CRLF line ends; Unicode line separators inside strings. What is
refused, besides wrong types: text that is not UTF-8, NaN/Infinity (not JSON), a key given
twice in one row, unpaired surrogate escapes (not text), a string field longer than
MAX_FIELD_CHARS, more than MAX_CHUNKS contexts in a row, nesting too deep to decode.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.data.fields import ALIASES, CANONICAL, GENERATED_FIELDS
from localeval.data.file_rows import Row, file_rows
from localeval.data.ids import DefaultIds, content_id
from localeval.data.seen_ids import SeenIds
from localeval.errors import DatasetError, UsageError, locate
from localeval.text import printable

#: longest string accepted in one field or chunk: far beyond any judge's context window
#: (about 250,000 tokens), so a longer one is a data error (a whole document pasted in)
MAX_FIELD_CHARS = 1_000_000
#: most chunks accepted in one row's contexts: each costs a judge call for context
#: precision, and no judge's window holds more than a few hundred
MAX_CHUNKS = 1_000
#: longest sample id, in UTF-8 bytes: ids are keys of both stores' indexes, and a
#: PostgreSQL index entry holds at most 2,704 bytes (with the run id and metric beside it)
MAX_SAMPLE_ID_BYTES = 1_000
#: the character PostgreSQL refuses in a text column: refused for SQLite too, so that a run
#: one store keeps can be copied to the other
NUL = "\x00"

_SURROGATE = re.compile("[\ud800-\udfff]")
#: why a NUL is refused, wherever text is read (data files, labels files)
NUL_PROBLEM = "holds a NUL character (\\u0000), which no run database can store as text"


@dataclass(frozen=True)
class DatasetWarning:
    """Something in a usable row the user may not have meant (an unknown field name)."""

    path: str
    message: str
    line: int | None = None
    field: str | None = None
    row: int | None = None

    def __str__(self) -> str:
        return f"{locate(self.path, self.line, self.field, self.row)}: {self.message}"


#: receives each invalid row's error when rows are to be skipped rather than stop the read
OnInvalid = Callable[[DatasetError], None]
OnWarning = Callable[[DatasetWarning], None]


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


class _Row:
    """One decoded row under validation: its fields by canonical name, and for each the name
    the file used, so that errors quote the file's own field names ('user_input', ...)."""

    def __init__(self, raw: dict[str, Any], path: str, line: int, row: int | None = None):
        self.path = path
        self.line = line
        self.row = row
        self.fields: dict[str, Any] = {}
        self.source: dict[str, str] = {}
        self.extra: dict[str, Any] = {}
        for key, value in raw.items():
            name = ALIASES.get(key, key)
            if name not in CANONICAL:
                self.extra[key] = value
                continue
            if name in self.fields and self.fields[name] != value:
                raise DatasetError(
                    path,
                    f"given twice, as '{self.source[name]}' and as '{key}', with different values",
                    line,
                    name,
                    row,
                )
            self.fields[name] = value
            self.source[name] = key

    def error(self, name: str, message: str) -> DatasetError:
        return DatasetError(self.path, message, self.line, self.source.get(name, name), self.row)

    def check_text(self, name: str, value: str, item: int | None = None) -> None:
        """Refuse text no model should be given and no store could keep: absurdly long, not
        valid Unicode, or holding a NUL character."""
        what = "" if item is None else f"item {item} "
        if NUL in value:
            raise self.error(name, f"{what}{NUL_PROBLEM}")
        if len(value) > MAX_FIELD_CHARS:
            raise self.error(
                name,
                f"{what}is {len(value):,} characters long, more than the {MAX_FIELD_CHARS:,} "
                "localeval accepts in one field",
            )
        if found := _SURROGATE.search(value):
            raise self.error(
                name,
                f"{what}holds an unpaired surrogate (\\u{ord(found.group()):04x}), which is "
                "not valid Unicode text",
            )

    def optional_text(self, name: str) -> str | None:
        value = self.fields.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(name, f"must be a string, got {_kind(value)}")
        self.check_text(name, value)
        return value

    def question(self) -> str:
        question = self.fields.get("question")
        if question is None:
            raise self.error("question", "missing (also accepted as 'user_input')")
        if not isinstance(question, str):
            raise self.error("question", f"must be a string, got {_kind(question)}")
        if not question.strip():
            raise self.error("question", "is empty")
        self.check_text("question", question)
        return question

    def contexts(self) -> list[str] | None:
        contexts = self.fields.get("contexts")
        if contexts is None:  # null: nothing was retrieved, or the field is not used
            return None
        if not isinstance(contexts, list):
            raise self.error("contexts", f"must be a list of strings, got {_kind(contexts)}")
        if len(contexts) > MAX_CHUNKS:
            raise self.error(
                "contexts",
                f"has {len(contexts):,} chunks, more than the {MAX_CHUNKS:,} localeval accepts "
                "in one row",
            )
        for index, chunk in enumerate(contexts):
            if not isinstance(chunk, str):
                raise self.error("contexts", f"item {index} must be a string, got {_kind(chunk)}")
            self.check_text("contexts", chunk, item=index)
        return contexts

    def sample_id(self) -> str | None:
        sample_id = self.fields.get("sample_id")
        if sample_id is None:
            return None
        if isinstance(sample_id, bool) or not isinstance(sample_id, str | int):
            raise self.error("sample_id", f"must be a string or an integer, got {_kind(sample_id)}")
        if isinstance(sample_id, str):
            if not sample_id.strip():
                raise self.error("sample_id", "is empty")
            self.check_text("sample_id", sample_id)
            size = len(sample_id.encode("utf-8"))
            if size > MAX_SAMPLE_ID_BYTES:
                raise self.error(
                    "sample_id",
                    f"is {size:,} bytes long (UTF-8), more than the {MAX_SAMPLE_ID_BYTES:,} a "
                    "sample id may have",
                )
        return str(sample_id)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def sample_from_row(
    raw: Any,
    path: str,
    line: int,
    default_id: Callable[[str], str] = content_id,
    row_number: int | None = None,
) -> Sample:
    """Validate one decoded row and build a Sample from it; a row without a sample_id gets
    `default_id(question)` (a file's rows: DefaultIds, which numbers repeated questions)."""
    if not isinstance(raw, dict):
        raise DatasetError(
            path, f"each row must be a JSON object, got {_kind(raw)}", line, row=row_number
        )
    row = _Row(raw, path, line, row_number)
    question = row.question()
    sample_id = row.sample_id()
    return Sample(
        sample_id=default_id(question) if sample_id is None else sample_id,
        question=question,
        contexts=row.contexts(),
        answer=row.optional_text("answer"),
        reference_answer=row.optional_text("reference_answer"),
        category=row.optional_text("category"),
        line=line,
        extra=row.extra,
    )


def _unknown_field_warning(
    path: str, line: int, names: list[str], row: int | None = None
) -> DatasetWarning:
    known = [*CANONICAL, *ALIASES]
    described = []
    for name in names:
        close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.75)
        described.append(f"'{name}' (did you mean '{close[0]}'?)" if close else f"'{name}'")
    noun = "field" if len(names) == 1 else "fields"
    return DatasetWarning(
        path,
        f"unknown {noun} {', '.join(described)} kept with the sample but not scored",
        line,
        row=row,
    )


def read_samples(
    path: str | Path,
    on_invalid: OnInvalid | None = None,
    on_warning: OnWarning | None = None,
    name: str | None = None,
) -> Iterator[Sample]:
    """Yield the samples of a file, validating each.

    An invalid row raises DatasetError, unless `on_invalid` is given: the row's error is
    then passed to it and the row skipped. Errors that leave the rest of the file unreadable
    (not UTF-8, broken JSON array or CSV quoting) always raise. Unknown field names are
    reported to `on_warning` on the first row that has them. Messages name the file as
    `name` (default: its path, made printable), e.g. "<stdin>" for data read from a pipe.
    """
    file = Path(path)
    where = name or printable(str(file))
    try:
        kind, rows = file_rows(file)
        yield from _validated(rows, where, kind == "json", on_invalid, on_warning)
    except DatasetError as exc:
        raise exc.at(where) from None


def _validated(
    rows: Iterator[Row],
    where: str,
    numbered: bool,
    on_invalid: OnInvalid | None,
    on_warning: OnWarning | None,
) -> Iterator[Sample]:
    """The samples of decoded rows, checked one by one (`numbered`: rows of a JSON array,
    named by their number too)."""
    seen = SeenIds()
    try:
        yield from _checked(rows, where, numbered, on_invalid, on_warning, seen)
    finally:
        seen.close()


def _checked(
    rows: Iterator[Row],
    where: str,
    numbered: bool,
    on_invalid: OnInvalid | None,
    on_warning: OnWarning | None,
    seen: SeenIds,
) -> Iterator[Sample]:
    """`_validated`'s loop, with the ids seen so far in `seen`."""
    unknown: set[str] = set()
    default_ids = DefaultIds()
    for number, (line, raw) in enumerate(rows, start=1):
        row_number = number if numbered else None
        try:
            if isinstance(raw, DatasetError):
                raise raw.at(where, row_number)
            sample = sample_from_row(raw, where, line, default_ids, row_number)
            if (first := seen.first(sample.sample_id)) is not None:
                raise DatasetError(
                    where,
                    f"duplicate sample_id '{sample.sample_id}' (first {first})",
                    line,
                    "sample_id",
                    row_number,
                )
        except DatasetError as exc:
            if on_invalid is None:
                raise
            on_invalid(exc)
            continue
        seen.add(sample.sample_id, f"in row {number}" if numbered else f"on line {line}")
        # a generated test set's own fields are expected, but only in a row with all three:
        # a user's own 'source' field still warns
        expected = GENERATED_FIELDS if sample.extra.keys() >= GENERATED_FIELDS else frozenset()
        if new := [n for n in sample.extra if n not in unknown and n not in expected]:
            unknown.update(new)
            if on_warning is not None:
                on_warning(_unknown_field_warning(where, line, new, row_number))
        yield sample


class InvalidRowCounter:
    """Passes invalid rows on to `on_invalid` (if any), counting them, so that a file whose
    rows were all skipped is told apart from an empty one."""

    def __init__(self, on_invalid: OnInvalid | None):
        self.on_invalid = on_invalid
        self.skipped = 0

    def _count(self, error: DatasetError) -> None:
        self.skipped += 1
        assert self.on_invalid is not None
        self.on_invalid(error)

    def handler(self) -> OnInvalid | None:
        """What read_samples takes: None makes the first invalid row raise."""
        return self._count if self.on_invalid is not None else None

    def no_samples(self, path: str | Path) -> DatasetError:
        """The error for a file that yielded no sample."""
        where = printable(str(path))
        if self.skipped:
            return DatasetError(where, f"holds no valid samples ({self.skipped} invalid rows)")
        return DatasetError(where, "holds no samples")


def load_samples(
    path: str | Path,
    on_invalid: OnInvalid | None = None,
    on_warning: OnWarning | None = None,
) -> list[Sample]:
    """All samples of a file, validated; raises DatasetError if there are none (or, without
    `on_invalid`, if any row is bad)."""
    counter = InvalidRowCounter(on_invalid)
    samples = list(read_samples(path, counter.handler(), on_warning))
    if not samples:
        raise counter.no_samples(path)
    return samples


def check_answered(path: str | Path, name: str | None = None) -> None:
    """UsageError for a test set from `localeval generate` that `localeval answer` has not
    filled yet: rows with the generator's fields and not one answer or context (every
    metric would be undefined or 0). Other files, and invalid rows, are left to the reader
    and the metrics, as before (an all-empty file of other rows is still scored undefined).
    Messages name the file as `name` (default: its path, made printable), as read_samples."""
    generated = False
    for sample in read_samples(path, on_invalid=lambda _error: None, name=name):
        if (sample.answer and sample.answer.strip()) or sample.contexts:
            return
        generated = generated or sample.extra.keys() >= GENERATED_FIELDS
    if generated:
        shown = printable(str(path))
        where = name or shown
        # data read from standard input has no name to give `answer`
        testset = shown if where == shown else "TESTSET"
        raise UsageError(
            f"{where}: no row has an answer or contexts, so there is nothing to score. It is a "
            f"test set from `localeval generate`: fill it first, with localeval answer "
            f"{testset} --app module:function --output filled.jsonl"
        )
