"""`localeval answer`: the user's pipeline fills a test set, resumably."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from testset_fakes import json_lines

from localeval.cli import main
from localeval.errors import UsageError
from localeval.testset.answer import AppError, answer_testset, load_app, partial_path, read_reply

ROWS = [
    {
        "sample_id": f"single_fact-{n}",
        "kind": "single_fact",
        "category": "ops",
        "question": f"Question {n}?",
        "reference_answer": f"Answer {n}.",
        "answer": "",
        "contexts": [],
        "reference_contexts": [f"Chunk {n}."],
        "source": [{"file": "docs/a.md", "line": n}],
    }
    for n in range(1, 5)
]

APP = """
CALLS = []

def answer(question):
    CALLS.append(question)
    if question == FAIL_ON:
        raise ValueError("the index is not loaded")
    return {"answer": "It is " + question.lower(), "contexts": ["ctx for " + question]}

def as_tuple(question):
    return ("A: " + question, ("c1", "c2"))

def bad_reply(question):
    return "just a string"

FAIL_ON = None
"""


@pytest.fixture
def testset(tmp_path: Path) -> Path:
    path = tmp_path / "testset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


@pytest.fixture
def app_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "my_rag.py"
    path.write_text(APP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield path
    sys.modules.pop("my_rag", None)


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["answer", *args, "--no-progress"])


def test_answer_fills_every_row_and_keeps_the_other_fields(testset: Path, app_file: Path) -> None:
    out = testset.parent / "filled.jsonl"
    result = run(str(testset), "--app", "my_rag:answer", "--output", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Answered 4 questions with my_rag:answer; ")
    assert result.stdout.endswith(f" s in the app. Written to {out}\n")
    rows = json_lines(out)
    assert [r["answer"] for r in rows] == [f"It is question {n}?" for n in range(1, 5)]
    assert rows[0] == {
        **ROWS[0],
        "answer": "It is question 1?",
        "contexts": ["ctx for Question 1?"],
    }
    assert list(rows[0]) == [
        "sample_id", "kind", "category", "question", "reference_answer", "answer", "contexts",
        "reference_contexts", "source",
    ]  # fmt: skip
    assert not partial_path(out).exists()


def test_a_file_path_app_and_a_tuple_reply(testset: Path, app_file: Path) -> None:
    out = testset.parent / "filled.jsonl"
    result = run(str(testset), "--app", f"{app_file}:as_tuple", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert json_lines(out)[1]["answer"] == "A: Question 2?"
    assert json_lines(out)[1]["contexts"] == ["c1", "c2"]


def test_a_failing_function_names_the_sample_and_keeps_the_answers_before_it(
    testset: Path, app_file: Path
) -> None:
    app_file.write_text(APP.replace("FAIL_ON = None", "FAIL_ON = 'Question 3?'"), encoding="utf-8")
    out = testset.parent / "filled.jsonl"
    result = run(str(testset), "--app", "my_rag:answer", "-o", str(out))
    assert result.exit_code == 2
    partial = partial_path(out)
    assert result.stderr == (
        "Error: the app my_rag:answer failed on sample 'single_fact-3' (line 3: 'Question 3?'): "
        "ValueError: the index is not loaded (at my_rag.py:7); the 2 answers before it are kept "
        f"in {partial}. Fix it and run the same command again to continue\n"
    )
    assert not out.exists()
    assert len(partial.read_text(encoding="utf-8").splitlines()) == 3  # header + 2 answers

    # fixed: the same command asks only the questions not answered yet
    app_file.write_text(APP, encoding="utf-8")
    sys.modules.pop("my_rag", None)
    result = run(str(testset), "--app", "my_rag:answer", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "(2 answered by an earlier run)" in result.stdout
    assert sys.modules["my_rag"].CALLS == ["Question 3?", "Question 4?"]
    assert [r["answer"] for r in json_lines(out)] == [f"It is question {n}?" for n in range(1, 5)]
    assert not partial.exists()


def test_resume_after_a_crash_mid_line_and_no_resume(testset: Path, app_file: Path) -> None:
    out = testset.parent / "filled.jsonl"
    partial = partial_path(out)
    app_spec = "my_rag:answer"
    import hashlib

    header = {
        "localeval_answer": 1,
        "testset_sha256": hashlib.sha256(testset.read_bytes()).hexdigest(),
        "app": app_spec,
    }
    kept = {"sample_id": "single_fact-1", "answer": "kept", "contexts": ["k"]}
    partial.write_text(
        json.dumps(header) + "\n" + json.dumps(kept) + '\n{"sample_id": "single_fa',
        encoding="utf-8",
    )
    result = run(str(testset), "--app", app_spec, "-o", str(out))
    assert result.exit_code == 0, result.output
    assert json_lines(out)[0]["answer"] == "kept"
    assert sys.modules["my_rag"].CALLS == ["Question 2?", "Question 3?", "Question 4?"]

    partial.write_text(json.dumps(header) + "\n" + json.dumps(kept) + "\n", encoding="utf-8")
    result = run(str(testset), "--app", app_spec, "-o", str(out), "--no-resume")
    assert result.exit_code == 0
    assert json_lines(out)[0]["answer"] == "It is question 1?"


def test_answers_of_another_test_set_are_not_mixed_in(testset: Path, app_file: Path) -> None:
    out = testset.parent / "filled.jsonl"
    partial_path(out).write_text(
        json.dumps({"localeval_answer": 1, "testset_sha256": "abc", "app": "my_rag:answer"}) + "\n",
        encoding="utf-8",
    )
    result = run(str(testset), "--app", "my_rag:answer", "-o", str(out))
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {partial_path(out)} holds answers from another version of the test set "
        "(testset_sha256 'abc'); run with --no-resume to start again, or delete it\n"
    )


def test_the_output_may_not_be_the_test_set(testset: Path, app_file: Path) -> None:
    result = run(str(testset), "--app", "my_rag:answer", "-o", str(testset))
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: --output {testset}: is the same file as the test set, {testset}; refusing to "
        "overwrite it\n"
    )
    result = run(str(testset), "--app", f"{app_file}:answer", "-o", str(app_file))
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: --output {app_file}: is the same file as the app's file, {app_file}; refusing "
        "to overwrite it\n"
    )
    assert app_file.read_text(encoding="utf-8") == APP


def test_an_existing_output_is_said_and_a_stream_keeps_its_answers_beside_the_test_set(
    testset: Path, app_file: Path
) -> None:
    out = testset.parent / "filled.jsonl"
    out.write_text("old\n", encoding="utf-8")
    result = run(str(testset), "--app", "my_rag:answer", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert result.stderr == f"Warning: --output {out} exists; it will be overwritten\n"
    # /dev/null is a stream: written to, never replaced; answers kept beside the test set
    app_file.write_text(APP.replace("FAIL_ON = None", "FAIL_ON = 'Question 2?'"), encoding="utf-8")
    sys.modules.pop("my_rag", None)
    result = run(str(testset), "--app", "my_rag:answer", "-o", os.devnull)
    assert result.exit_code == 2
    kept = testset.with_name("testset.jsonl.answers.partial")
    assert result.stderr.endswith(
        f"the 1 answers before it are kept in {kept}. Fix it and run the same command again to "
        "continue\n"
    )
    app_file.write_text(APP, encoding="utf-8")
    sys.modules.pop("my_rag", None)
    result = run(str(testset), "--app", "my_rag:answer", "-o", os.devnull)
    assert result.exit_code == 0, result.output
    assert "(1 answered by an earlier run)" in result.stdout
    assert not kept.exists() and Path(os.devnull).is_char_device()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("my_rag", "--app 'my_rag': give it as module:function or path/to/file.py:function"),
        ("no_such_module:f", "--app 'no_such_module:f': no module 'no_such_module' (run from the "
         "folder that holds it, or give its file: path/to/file.py:function)"),
        ("my_rag:nothing", "--app 'my_rag:nothing': my_rag has no 'nothing'"),
        ("my_rag:CALLS", "--app 'my_rag:CALLS': CALLS is not a function"),
        ("missing.py:f", "--app: no such file missing.py"),
    ],
)  # fmt: skip
def test_bad_app_specs(spec: str, message: str, testset: Path, app_file: Path) -> None:
    result = run(str(testset), "--app", spec, "-o", str(testset.parent / "out.jsonl"))
    assert result.exit_code == 2
    assert result.stderr == f"Error: {message}\n"


def test_an_app_that_fails_to_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_app.py").write_text("import json\nraise RuntimeError('no index')\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        AppError,
        match=r"importing broken_app failed: RuntimeError: no index \(at broken_app.py:2\)",
    ):
        load_app("broken_app:f")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("text", "returned str; return {'answer': str, 'contexts': [str, ...]} or a tuple "
         "(answer, contexts)"),
        ({"answer": "a"}, "the returned dict has no 'contexts'"),
        ({"answer": None, "contexts": []}, "the answer is NoneType, not a string"),
        (("a", "one context"), "contexts is str, not a list of strings"),
        (("a", ["ok", 3]), "contexts holds a int, not a string"),
    ],
)  # fmt: skip
def test_unusable_replies_say_what_is_wrong(reply: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        read_reply(reply)
    assert str(info.value) == message


def test_documents_with_page_content_count_as_contexts() -> None:
    class Doc:
        page_content = "chunk text"

    assert read_reply({"answer": "a", "contexts": [Doc(), "b"]}) == ("a", ["chunk text", "b"])


def test_library_call_returns_counts(testset: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    result = answer_testset(testset, "inline", out, app=lambda q: (q, [q]))
    assert (result.answered, result.resumed) == (4, 0)
    with pytest.raises(UsageError, match=r"folder .* does not exist"):
        answer_testset(testset, "inline", tmp_path / "no" / "o.jsonl", app=lambda q: (q, []))
