"""The malformed-input corpus (tests/bad_inputs/): every file is either refused with exit 2
and one line naming file, line and field, or is usable with a defined behaviour. Never a
traceback. Large cases (a 10 MB field, 10,000 chunks, deep nesting) are made at run time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fakes import FakeEmbedder, ScriptedJudge
from standins import StandIns

from localeval.cli import main
from localeval.data.samples import DatasetWarning, load_samples
from localeval.errors import DatasetError

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
ROOT = CORPUS.parent.parent

#: corpus file -> the one line `evaluate` prints (after "Error: "); {path} is the file
REFUSED: dict[str, str] = {
    "alias_conflict.jsonl": "{path}, line 1, field 'question': given twice, as 'question' "
    "and as 'user_input', with different values",
    "answer_list.jsonl": "{path}, line 1, field 'answer': must be a string, got a list",
    "array_of_numbers.json": "{path}, row 1 (line 1): each row must be a JSON object, got a number",
    "blank_lines_only.jsonl": "{path}: holds no samples",
    "category_boolean.jsonl": "{path}, line 1, field 'category': must be a string, got a boolean",
    "contexts_item_null.jsonl": "{path}, line 1, field 'contexts': item 1 must be a string, "
    "got null",
    "contexts_number.jsonl": "{path}, line 1, field 'contexts': must be a list of strings, "
    "got a number",
    "contexts_object.jsonl": "{path}, line 1, field 'contexts': must be a list of strings, "
    "got an object",
    "contexts_string.jsonl": "{path}, line 1, field 'contexts': must be a list of strings, "
    "got a string",
    "csv_bad_contexts.csv": "{path}, line 3, field 'contexts': must be a JSON array of strings "
    "in a CSV cell",
    "csv_contexts_not_list.csv": "{path}, line 2, field 'contexts': must be a list of strings, "
    "got a string",
    "csv_duplicate_column.csv": "{path}, line 1: the header names the column 'question' twice",
    "csv_ragged.csv": "{path}, line 3: has 3 cells, the header has 2",
    "csv_unclosed_quote.csv": "{path}, line 2: invalid CSV (a quoted cell is never closed)",
    "cut_short_last_line.jsonl": "{path}, line 2: invalid JSON (the string at column 30 is "
    "never closed); the line ends before the row does (cut short, or split over lines?)",
    "data.txt": "{path}: unknown file type '.txt' (use .jsonl, .json or .csv, or .gz of one)",
    "duplicate_ids.jsonl": "{path}, line 3, field 'sample_id': duplicate sample_id 'a' "
    "(first on line 1)",
    "duplicate_ids_int_and_str.jsonl": "{path}, line 2, field 'sample_id': duplicate "
    "sample_id '7' (first on line 1)",
    "duplicate_key.jsonl": "{path}, line 1, field 'question': given twice in the same row",
    "empty.jsonl": "{path}: holds no samples",
    "empty_array.json": "{path}: holds no samples",
    "gzip.jsonl": "{path}: is gzip-compressed; decompress it first",
    "header_only.csv": "{path}: holds no samples",
    "huge_number.jsonl": "{path}, line 1: invalid JSON (a number with too many digits)",
    "lone_surrogate.jsonl": "{path}, line 1, field 'answer': holds an unpaired surrogate "
    "(\\ud800), which is not valid Unicode text",
    "nan_value.jsonl": "{path}, line 1: invalid JSON (NaN is not a JSON value)",
    "not_array.json": "{path}, line 1: a .json file must hold an array of objects",
    "not_utf8.jsonl": "{path}, line 2: is not valid UTF-8 (byte 151); save the file as UTF-8",
    "pretty_printed.jsonl": "{path}, line 1: invalid JSON (Expecting property name enclosed "
    "in double quotes, column 2); the line ends before the row does (cut short, or split over "
    "lines?)",
    "question_blank.jsonl": "{path}, line 1, field 'question': is empty",
    "question_empty.jsonl": "{path}, line 1, field 'question': is empty",
    "question_missing.jsonl": "{path}, line 2, field 'question': missing (also accepted as "
    "'user_input')",
    "question_number.jsonl": "{path}, line 1, field 'question': must be a string, got a number",
    "reference_number_alias.jsonl": "{path}, line 1, field 'ground_truth': must be a string, "
    "got a number",
    "row_is_list.jsonl": "{path}, line 1: each row must be a JSON object, got a list",
    "row_is_null.jsonl": "{path}, line 2: each row must be a JSON object, got null",
    "row_is_string.jsonl": "{path}, line 1: each row must be a JSON object, got a string",
    "sample_id_empty.jsonl": "{path}, line 1, field 'sample_id': is empty",
    "sample_id_float.jsonl": "{path}, line 1, field 'sample_id': must be a string or an "
    "integer, got a number",
    "syntax_error_line_3.jsonl": "{path}, line 3: invalid JSON (Expecting ',' delimiter, "
    "column 34)",
    "trailing_comma.json": "{path}, line 2: invalid JSON (a comma after the last row)",
    "unclosed_array.json": "{path}, line 3: invalid JSON (expected ',' or ']' after a row)",
    "utf16.jsonl": "{path}: is UTF-16 text; save it as UTF-8",
}

#: corpus files that load, each with its own test below
USABLE = {
    "bom.jsonl",
    "bom_each_line.jsonl",
    "contexts_null.jsonl",
    "crlf_and_blank_lines.jsonl",
    "csv_bom_unnamed_columns.csv",
    "csv_embedded_newlines.csv",
    "empty_chunk.jsonl",
    "empty_strings.jsonl",
    "line_separator_in_text.jsonl",
    "unknown_fields.jsonl",
}

ROW = {"question": "When was the tower finished?", "contexts": ["c"], "answer": "In 1889."}


def _big_field(path: Path) -> None:
    path.write_text(json.dumps({**ROW, "answer": "x" * (10 << 20)}) + "\n")


def _big_csv_cell(path: Path) -> None:
    path.write_text("question,answer\nQ," + "y" * (10 << 20) + "\n")


def _many_chunks(path: Path) -> None:
    path.write_text(json.dumps({**ROW, "contexts": [f"chunk {i}" for i in range(10_000)]}) + "\n")


def _deep_nesting(path: Path) -> None:
    depth = 200_000
    path.write_text('{"question": "Q", "meta": ' + "[" * depth + "]" * depth + "}\n")


def _directory(path: Path) -> None:
    path.mkdir()


def _missing(path: Path) -> None:
    pass


#: made at run time: name -> (how to make it, the one-line error)
GENERATED: dict[str, tuple[Callable[[Path], None], str]] = {
    "big_field.jsonl": (
        _big_field,
        "{path}, line 1, field 'answer': is 10,485,760 characters long, more than the "
        "1,000,000 localeval accepts in one field",
    ),
    "big_cell.csv": (
        _big_csv_cell,
        "{path}, line 2, field 'answer': is 10,485,760 characters long, more than the "
        "1,000,000 localeval accepts in one field",
    ),
    "many_chunks.jsonl": (
        _many_chunks,
        "{path}, line 1, field 'contexts': has 10,000 chunks, more than the 1,000 localeval "
        "accepts in one row",
    ),
    "deep_nesting.jsonl": (_deep_nesting, "{path}, line 1: invalid JSON (nested too deeply)"),
    "directory.jsonl": (_directory, "{path}: is a directory, not a data file"),
    "directory": (_directory, "{path}: is a directory, not a data file"),
    "missing.jsonl": (_missing, "{path}: file not found"),
}


@pytest.fixture
def no_models(stand_ins: StandIns) -> None:
    stand_ins.forbid("models must not be loaded for bad input")


def use_fakes(stand_ins: StandIns, answers: list[Any]) -> ScriptedJudge:
    judge: ScriptedJudge = stand_ins.use(ScriptedJudge(answers), FakeEmbedder())
    return judge


def evaluate(*args: str) -> Result:
    return CliRunner().invoke(main, ["evaluate", *args, "--no-progress"])


def assert_refused(result: Result, message: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # handled, not an escaped exception
    assert result.stderr == f"Error: {message}\n"
    assert result.stdout == ""


def test_corpus_is_large_and_every_file_is_described() -> None:
    files = {p.name for p in CORPUS.iterdir() if not p.name.startswith(".")}
    assert files == set(REFUSED) | USABLE
    assert len(REFUSED) + len(GENERATED) >= 25


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_one_line(name: str, no_models: None) -> None:
    path = CORPUS / name
    assert_refused(evaluate(str(path)), REFUSED[name].format(path=path))


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_input_refused_with_one_line(name: str, tmp_path: Path, no_models: None) -> None:
    make, message = GENERATED[name]
    path = tmp_path / name
    make(path)
    assert_refused(evaluate(str(path)), message.format(path=path))


def test_refusals_in_a_real_process_print_no_traceback(tmp_path: Path) -> None:
    """Deep nesting and huge fields in a fresh interpreter (its own stack and limits)."""
    for name in ("deep_nesting.jsonl", "big_field.jsonl"):
        make, message = GENERATED[name]
        path = tmp_path / name
        make(path)
        done = subprocess.run(
            [sys.executable, "-m", "localeval.cli", "evaluate", str(path), "--no-progress"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (done.returncode, done.stderr, done.stdout) == (
            2,
            f"Error: {message.format(path=path)}\n",
            "",
        )


# -- usable files: what each one loads as ----------------------------------------------


def load(name: str) -> tuple[list[Any], list[str]]:
    warnings: list[DatasetWarning] = []
    samples = load_samples(CORPUS / name, on_warning=warnings.append)
    return samples, [str(w) for w in warnings]


def test_byte_order_marks_are_ignored() -> None:
    (sample,), warnings = load("bom.jsonl")
    assert sample.question == "When was the tower finished?" and warnings == []
    samples, _ = load("bom_each_line.jsonl")  # two files joined with cat
    assert [s.sample_id for s in samples] == ["a", "b"]
    (row,), _ = load("csv_bom_unnamed_columns.csv")  # Excel: BOM, CRLF, trailing commas
    assert (row.question, row.answer, row.extra) == ("Q1", "A1", {})


def test_crlf_and_blank_lines_keep_line_numbers() -> None:
    samples, _ = load("crlf_and_blank_lines.jsonl")
    assert [(s.sample_id, s.line) for s in samples] == [("a", 1), ("b", 3)]


def test_unicode_line_separator_inside_a_string_is_text() -> None:
    (sample,), _ = load("line_separator_in_text.jsonl")
    assert sample.answer == "In 1889.\u2028It took two years."


def test_csv_cells_may_span_lines() -> None:
    first, second = load("csv_embedded_newlines.csv")[0]
    assert first.question == "When was the tower\nfinished?"
    assert first.contexts == ["The tower was finished\nin 1889."]
    assert first.answer == "In 1889.\nIt took two years."
    assert (first.line, second.line) == (2, 5)


def test_unknown_fields_are_kept_and_warned_once_with_a_suggestion() -> None:
    samples, warnings = load("unknown_fields.jsonl")
    path = CORPUS / "unknown_fields.jsonl"
    assert warnings == [
        f"{path}, line 1: unknown fields 'contxts' (did you mean 'contexts'?), 'label' kept "
        "with the sample but not scored",
        f"{path}, line 2: unknown field 'source' kept with the sample but not scored",
    ]
    assert samples[0].contexts is None and samples[0].extra["label"] == 1


def test_unknown_field_warning_reaches_stderr(stand_ins: StandIns) -> None:
    # line 1's contexts are misspelt, so only line 2 has a statement to ask about
    judge = use_fakes(stand_ins, [0.9])
    path = CORPUS / "unknown_fields.jsonl"
    result = evaluate(str(path), "-m", "faithfulness")
    assert result.exit_code == 0, result.output
    judge.assert_done()
    assert result.stderr.splitlines()[:2] == [
        f"Warning: {path}, line 1: unknown fields 'contxts' (did you mean 'contexts'?), "
        "'label' kept with the sample but not scored",
        f"Warning: {path}, line 2: unknown field 'source' kept with the sample but not scored",
    ]


def test_empty_strings_are_undefined_with_reasons(stand_ins: StandIns, tmp_path: Path) -> None:
    judge = use_fakes(stand_ins, [])  # nothing may be asked of the judge
    out = tmp_path / "r.json"
    result = evaluate(str(CORPUS / "empty_strings.jsonl"), "-o", str(out))
    assert result.exit_code == 1, result.output  # gates fail: no defined score
    judge.assert_done()
    details = json.loads(out.read_text())["samples"][0]["details"]
    assert {m: d["undefined_reason"] for m, d in details.items()} == {
        "context_precision": "no contexts",
        "faithfulness": "no answer",
        "context_recall": "no reference_answer",
        "answer_relevancy": "no answer",
    }


def test_null_contexts_mean_nothing_retrieved(stand_ins: StandIns, tmp_path: Path) -> None:
    use_fakes(stand_ins, [])
    out = tmp_path / "r.json"
    result = evaluate(str(CORPUS / "contexts_null.jsonl"), "-m", "faithfulness", "-o", str(out))
    assert result.exit_code == 1
    sample = json.loads(out.read_text())["samples"][0]
    assert sample["details"]["faithfulness"]["undefined_reason"] == "no contexts"


def test_empty_chunk_is_useless(stand_ins: StandIns, tmp_path: Path) -> None:
    judge = use_fakes(stand_ins, [])  # context precision asks the embedder only
    out = tmp_path / "r.json"
    result = evaluate(str(CORPUS / "empty_chunk.jsonl"), "-m", "context_precision", "-o", str(out))
    assert result.exit_code == 1, result.output  # the useful chunk ranked second: 0.5 < 0.65
    judge.assert_done()
    details = json.loads(out.read_text())["samples"][0]["details"]["context_precision"]
    assert details["usefulness"][0] == 0.0 and details["usefulness"][1] > 0.0


# -- --skip-invalid ----------------------------------------------------------------------


def mixed_file(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.jsonl"
    lines = [
        json.dumps({**ROW, "id": "a"}),
        json.dumps({**ROW, "id": "b", "contexts": "one chunk"}),
        '{"question": "broken", ',
        json.dumps({**ROW, "id": "c"}),
        json.dumps({**ROW, "id": "a"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_skip_invalid_evaluates_valid_rows_and_lists_the_others(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    path = mixed_file(tmp_path)
    judge = use_fakes(stand_ins, [0.9, 0.9])  # faithfulness of rows a and c
    out = tmp_path / "r.json"
    result = evaluate(str(path), "--skip-invalid", "-m", "faithfulness", "-o", str(out))
    assert result.exit_code == 0, result.output
    judge.assert_done()
    assert result.stderr.splitlines()[:4] == [
        f"Skipped: {path}, line 2, field 'contexts': must be a list of strings, got a string",
        f"Skipped: {path}, line 3: invalid JSON (Expecting property name enclosed in double "
        "quotes, column 24); the line ends before the row does (cut short, or split over lines?)",
        f"Skipped: {path}, line 5, field 'sample_id': duplicate sample_id 'a' (first on line 1)",
        f"Loaded 2 samples from {path} (3 invalid rows skipped); metrics: faithfulness",
    ]
    report = json.loads(out.read_text())
    assert [s["sample_id"] for s in report["samples"]] == ["a", "c"]
    assert report["run"]["skipped_rows"] == [
        {
            "file": str(path),
            "line": 2,
            "field": "contexts",
            "reason": "must be a list of strings, got a string",
        },
        {
            "file": str(path),
            "line": 3,
            "field": None,
            "reason": "invalid JSON (Expecting property name enclosed in double quotes, "
            "column 24); the line ends before the row does (cut short, or split over lines?)",
        },
        {
            "file": str(path),
            "line": 5,
            "field": "sample_id",
            "reason": "duplicate sample_id 'a' (first on line 1)",
        },
    ]


def test_skipped_rows_are_kept_in_the_run_history(stand_ins: StandIns, tmp_path: Path) -> None:
    path = mixed_file(tmp_path)
    use_fakes(stand_ins, [0.9, 0.9])
    assert evaluate(str(path), "--skip-invalid", "-m", "faithfulness").exit_code == 0
    again = tmp_path / "again.json"
    shown = CliRunner().invoke(main, ["runs", "show", "latest", "-o", str(again)])
    assert shown.exit_code == 0, shown.output
    rows = json.loads(again.read_text())["run"]["skipped_rows"]
    assert [(r["line"], r["field"]) for r in rows] == [(2, "contexts"), (3, None), (5, "sample_id")]


def test_without_skip_invalid_the_first_bad_row_stops_the_run(
    tmp_path: Path, no_models: None
) -> None:
    path = mixed_file(tmp_path)
    assert_refused(
        evaluate(str(path)),
        f"{path}, line 2, field 'contexts': must be a list of strings, got a string",
    )


def test_skip_invalid_with_no_valid_row(tmp_path: Path, no_models: None) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": 1}\n[]\n')
    result = evaluate(str(path), "--skip-invalid")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: {path}: holds no valid samples (2 invalid rows)"
    )


@pytest.mark.parametrize("name", ["not_utf8.jsonl", "unclosed_array.json", "gzip.jsonl"])
def test_skip_invalid_cannot_skip_an_unreadable_file(name: str, no_models: None) -> None:
    path = CORPUS / name
    assert_refused(evaluate(str(path), "--skip-invalid"), REFUSED[name].format(path=path))


def test_skipped_rows_is_always_in_results(stand_ins: StandIns, tmp_path: Path) -> None:
    use_fakes(stand_ins, [0.9])
    out = tmp_path / "r.json"
    result = evaluate(str(CORPUS / "bom.jsonl"), "-m", "faithfulness", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["run"]["skipped_rows"] == []


def test_library_raises_dataset_error_not_other_exceptions() -> None:
    """Every refused corpus file raises DatasetError from the library itself."""
    for name, message in REFUSED.items():
        path = CORPUS / name
        with pytest.raises(DatasetError) as info:
            load_samples(path)
        assert str(info.value) == message.format(path=path)
