"""Loading samples: formats, aliases, and errors that name file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.data.ids import content_id
from localeval.data.samples import load_samples
from localeval.errors import DatasetError

ROW = {"question": "Q?", "contexts": ["c1", "c2"], "answer": "A.", "reference_answer": "R."}


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8"
    )
    return path


def error_of(path: Path) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        load_samples(path)
    return info.value


def test_jsonl_loads_with_defaults(tmp_path: Path) -> None:
    samples = load_samples(write_jsonl(tmp_path / "d.jsonl", [ROW, {**ROW, "sample_id": "x"}]))
    assert [s.sample_id for s in samples] == [content_id(ROW["question"]), "x"]
    assert samples[0].contexts == ["c1", "c2"]
    assert samples[0].line == 1 and samples[1].line == 2


def test_ragas_aliases_load_unchanged(tmp_path: Path) -> None:
    row = {
        "user_input": "Q?",
        "retrieved_contexts": ["c"],
        "response": "A.",
        "reference": "R.",
        "id": 7,
    }
    (s,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert (s.question, s.contexts, s.answer, s.reference_answer, s.sample_id) == (
        "Q?",
        ["c"],
        "A.",
        "R.",
        "7",
    )
    (g,) = load_samples(write_jsonl(tmp_path / "g.jsonl", [{"question": "Q", "ground_truth": "G"}]))
    assert g.reference_answer == "G"


def test_unknown_fields_are_kept_in_extra(tmp_path: Path) -> None:
    (s,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [{**ROW, "label": 1, "pair_id": 3}]))
    assert s.extra == {"label": 1, "pair_id": 3}


def test_json_array_rows_know_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('[\n  {"question": "a"},\n  {"question": "b"},\n  {"question": 3}\n]\n')
    err = error_of(path)
    assert str(err) == f"{path}, row 3 (line 4), field 'question': must be a string, got a number"


def test_json_that_is_not_an_array(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('{"question": "a"}')
    assert "must hold an array" in str(error_of(path))


def test_csv_with_contexts_as_json_array(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        'question,contexts,answer\n"Q, with comma","[""c1"", ""c2""]",A\n', encoding="utf-8"
    )
    (s,) = load_samples(path)
    assert s.question == "Q, with comma" and s.contexts == ["c1", "c2"] and s.line == 2


def test_csv_bad_contexts_cell(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('question,contexts\nQ1,"[""ok""]"\nQ2,not json\n')
    assert str(error_of(path)) == (
        f"{path}, line 3, field 'contexts': must be a JSON array of strings in a CSV cell"
    )


def test_invalid_json_on_line_7(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    lines = [json.dumps(ROW)] * 6 + ['{"question": "Q", }']
    path.write_text("\n".join(lines) + "\n")
    err = error_of(path)
    assert err.line == 7
    assert str(err).startswith(f"{path}, line 7: invalid JSON (")


def test_missing_question(tmp_path: Path) -> None:
    err = error_of(write_jsonl(tmp_path / "d.jsonl", [ROW, {"answer": "A"}]))
    assert str(err) == (
        f"{tmp_path / 'd.jsonl'}, line 2, field 'question': missing (also accepted as 'user_input')"
    )


@pytest.mark.parametrize(
    ("contexts", "message"),
    [
        ("one chunk", "must be a list of strings, got a string"),
        (5, "must be a list of strings, got a number"),
        ({"a": 1}, "must be a list of strings, got an object"),
        (["ok", 3], "item 1 must be a string, got a number"),
    ],
)
def test_contexts_not_a_list_of_strings(tmp_path: Path, contexts: object, message: str) -> None:
    err = error_of(write_jsonl(tmp_path / "d.jsonl", [{**ROW, "contexts": contexts}]))
    assert str(err) == f"{tmp_path / 'd.jsonl'}, line 1, field 'contexts': {message}"


def test_null_contexts_means_missing(tmp_path: Path) -> None:
    (s,) = load_samples(write_jsonl(tmp_path / "d.jsonl", [{**ROW, "contexts": None}]))
    assert s.contexts is None


def test_duplicate_sample_id(tmp_path: Path) -> None:
    err = error_of(write_jsonl(tmp_path / "d.jsonl", [{**ROW, "id": "a"}, {**ROW, "id": "a"}]))
    assert "duplicate sample_id 'a' (first on line 1)" in str(err) and err.line == 2


def test_alias_conflict(tmp_path: Path) -> None:
    err = error_of(write_jsonl(tmp_path / "d.jsonl", [{**ROW, "user_input": "other"}]))
    assert "given twice, as 'question' and as 'user_input'" in str(err)


def test_row_that_is_not_an_object(tmp_path: Path) -> None:
    err = error_of(write_jsonl(tmp_path / "d.jsonl", [ROW, ["a", "b"]]))
    assert str(err).endswith("line 2: each row must be a JSON object, got a list")


def test_empty_file_and_directory_and_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    assert str(error_of(empty)) == f"{empty}: holds no samples"
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    assert str(error_of(folder)) == f"{folder}: is a directory, not a data file"
    assert str(error_of(tmp_path / "nope.jsonl")) == f"{tmp_path / 'nope.jsonl'}: file not found"


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(json.dumps(ROW).encode() + b"\n" + b'{"question": "\xff"}\n')
    err = error_of(path)
    assert err.line == 2 and "not valid UTF-8" in str(err)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(ROW).encode() + b"\n")
    assert load_samples(path)[0].question == "Q?"


def test_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "d.txt"
    path.write_text("x")
    assert "unknown file type '.txt'" in str(error_of(path))
