"""Reading data files piece by piece: the same rows and errors whatever the chunk size, and
memory that does not grow with the file."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from pathlib import Path

import pytest

from localeval.data import textstream
from localeval.data.samples import read_samples
from localeval.errors import DatasetError

ROWS = [
    {"sample_id": "a", "question": "Q1 é中文", "contexts": ["c1 [x] {y}", 'say "hi" \\ ok']},
    {"sample_id": "b", "question": "Q2 \u2028 line separator inside", "answer": "A2"},
    {"sample_id": "c", "question": "Q3 😀", "contexts": [], "reference_answer": "R3"},
]


def summary(path: Path) -> list[tuple[str, str, int]]:
    return [(s.sample_id, s.question, s.line) for s in read_samples(path)]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64, 1 << 20])
def test_same_rows_whatever_the_chunk_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_bytes(
        b"\xef\xbb\xbf" + "\r\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS).encode()
    )
    array = tmp_path / "d.json"
    array.write_text(json.dumps(ROWS, ensure_ascii=False, indent=1), encoding="utf-8")
    one_line = tmp_path / "one.json"
    one_line.write_text(json.dumps(ROWS, ensure_ascii=False), encoding="utf-8")
    table = tmp_path / "d.csv"
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["sample_id", "question", "contexts"])
    for row in ROWS:
        writer.writerow([row["sample_id"], row["question"] + "\nsecond line", "[]"])
    table.write_text(buffer.getvalue(), encoding="utf-8")

    monkeypatch.setattr(textstream, "CHUNK_BYTES", chunk)
    questions = [r["question"] for r in ROWS]
    assert summary(jsonl) == [
        ("a", questions[0], 1),
        ("b", questions[1], 2),
        ("c", questions[2], 3),
    ]
    lines = [s[2] for s in summary(array)]
    assert [s[1] for s in summary(array)] == questions and lines == [2, 10, 15]
    assert summary(one_line) == [
        ("a", questions[0], 1),
        ("b", questions[1], 1),
        ("c", questions[2], 1),
    ]
    assert [(s[0], s[2]) for s in summary(table)] == [("a", 2), ("b", 4), ("c", 6)]
    assert [s[1] for s in summary(table)] == [q + "\nsecond line" for q in questions]


@pytest.mark.parametrize("chunk", [1, 4, 1 << 20])
def test_errors_name_the_same_line_and_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(textstream, "CHUNK_BYTES", chunk)
    bad_utf8 = tmp_path / "u.jsonl"
    bad_utf8.write_bytes(json.dumps(ROWS[0]).encode() + b'\n{"question": "\xff"}\n')
    with pytest.raises(DatasetError) as err:
        list(read_samples(bad_utf8))
    offset = len(json.dumps(ROWS[0]).encode()) + 1 + len(b'{"question": "')
    assert (
        str(err.value)
        == f"{bad_utf8}, line 2: is not valid UTF-8 (byte {offset}); save the file as UTF-8"
    )

    array = tmp_path / "a.json"
    array.write_text('[\n  {"question": "Q"},\n  {"question": "Q2",, }\n]')
    with pytest.raises(DatasetError) as err:
        list(read_samples(array))
    assert str(err.value) == (
        f"{array}, row 2 (line 3): invalid JSON (Expecting property name enclosed in double "
        "quotes, "
        "column 21)"
    )

    unclosed = tmp_path / "b.json"
    unclosed.write_text('[{"question": "Q"}, {"question": "Q2')
    with pytest.raises(DatasetError) as err:
        list(read_samples(unclosed))
    assert str(err.value) == (
        f"{unclosed}, row 2 (line 1): invalid JSON (Unterminated string starting at, column 34)"
    )

    no_comma = tmp_path / "c.json"
    no_comma.write_text('[{"question": "Q"}\n{"question": "Q2"}]')
    with pytest.raises(DatasetError) as err:
        list(read_samples(no_comma))
    assert str(err.value) == f"{no_comma}, line 2: invalid JSON (expected ',' or ']' after a row)"


def test_a_line_separator_inside_a_string_does_not_split_the_row(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"question": "a\u2028b\x85c"}, ensure_ascii=False) + "\n")
    (sample,) = read_samples(path)
    assert sample.question == "a\u2028b\x85c"


def test_single_line_json_array_is_read_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a JSON array written by json.dump without indent is one 6 MB line
    path = tmp_path / "big.json"
    row = {"question": "Q" * 200, "contexts": ["c" * 1000], "answer": "A" * 300}
    with path.open("w") as handle:
        handle.write("[")
        handle.write(",".join(json.dumps({**row, "sample_id": i}) for i in range(4000)))
        handle.write("]")
    assert path.stat().st_size > 5_000_000
    monkeypatch.setattr(textstream, "CHUNK_BYTES", 64 * 1024)
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_samples(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 4000
    assert peak < 1_500_000, peak  # the duplicate-id index and a few chunks, not the file
