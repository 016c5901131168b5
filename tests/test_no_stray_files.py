"""A usage error, and a command that only looks, creates no file and no folder: not the
database named by --db, not its folder (issue 52, item 7)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.cli import main

ROW = {
    "sample_id": "s0",
    "question": "Q?",
    "contexts": ["A b c d."],
    "answer": "A b c d.",
    "reference_answer": "A b c d.",
}


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.jsonl").write_text(json.dumps(ROW) + "\n")
    return tmp_path


USAGE_ERRORS = [
    ["evaluate", "data.jsonl", "-m", "bleu", "--db", "zz.db", "--until-decided"],
    ["evaluate", "data.jsonl", "-m", "bleu", "--db", "zz.db", "--margin", "0.1"],
    ["evaluate", "data.jsonl", "-m", "no_such_metric", "--db", "zz.db"],
    ["evaluate", "data.jsonl", "-m", "bleu", "--db", "new/zz.db", "--threshold", "bleu=x"],
    ["evaluate", "data.jsonl", "-m", "bleu", "--db", "zz.db", "--resume", "r", "--no-resume"],
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=lambda a: " ".join(a[4:]))
def test_a_usage_error_creates_nothing(folder: Path, args: list[str]) -> None:
    before = tree(folder)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert tree(folder) == before


LOOKS = [
    (["cache", "stats", "--db", "typo/cs.db"], 0, "nothing cached: the database does not exist"),
    (["cache", "clear", "--yes", "--db", "typo/cs.db"], 0, "Deleted 0 cached judge calls"),
    (["runs", "list", "--db", "typo/cs.db"], 0, "does not exist"),
    (["runs", "show", "latest", "--db", "typo/cs.db"], 2, ""),
    (["report", "latest", "--db", "typo/cs.db"], 2, ""),
    (["diff", "latest~1", "latest", "--db", "typo/cs.db"], 2, ""),
    (["labels", "export", "--run", "latest", "--db", "typo/cs.db"], 2, ""),
]


@pytest.mark.parametrize(("args", "status", "said"), LOOKS, ids=lambda a: str(a))
def test_a_command_that_looks_creates_nothing(
    folder: Path, args: list[str], status: int, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the context states' folder is the user's cache folder: kept out of this one's way
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder.parent / f"{folder.name}-cache"))
    before = tree(folder)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == status, result.output
    assert said in result.output
    assert tree(folder) == before
    assert not os.path.exists("typo")
