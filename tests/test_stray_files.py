"""No usage error and no command that only reads creates a file or a folder: the options
are all checked before a database is opened, and reading a history never creates one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.cli import main

ROWS = [
    {"sample_id": f"s{i}", "question": f"Q{i}?", "answer": "A.", "reference_answer": "A."}
    for i in range(2)
]

#: (arguments, exit status, a word of the message); {db} is a database in a folder that
#: does not exist, {data} a data file, {labels} a labels file, {pairs} answers to compare,
#: {docs} a folder of documents, {out} an output not there yet
CASES = [
    (["evaluate", "{data}", "-m", "bleu", "--db", "{db}", "--until-decided"], 2, "give --baseline"),
    (
        ["evaluate", "{data}", "-m", "bleu", "--db", "{db}", "--margin", "0.1"],
        2,
        "--margin applies",
    ),
    (
        ["evaluate", "{data}", "-m", "bleu", "--db", "{db}", "--baseline", "latest"],
        2,
        "no run history",
    ),
    (["evaluate", "{data}", "-m", "bleu", "--db", "{db}", "--resume"], 2, "no run history"),
    (["cache", "stats", "--db", "{db}"], 0, "does not exist yet"),
    (["cache", "clear", "--yes", "--db", "{db}"], 0, "Deleted 0 cached judge calls"),
    (["runs", "list", "--db", "{db}"], 0, "does not exist"),
    (["runs", "show", "latest", "--db", "{db}"], 2, "no run history"),
    (["runs", "merge", "latest", "latest~1", "--db", "{db}"], 2, "no run history"),
    (["report", "latest", "--db", "{db}"], 2, "no run history"),
    (["diff", "latest~1", "latest", "--db", "{db}"], 2, "no run history"),
    (["labels", "export", "latest", "--db", "{db}"], 2, "no run history"),
    (["labels", "import", "{labels}", "--run", "latest", "--db", "{db}"], 2, "no run history"),
    (["review", "latest", "--db", "{db}"], 2, "no run history"),
    (["evaluate", "{data}", "-m", "faithfulness", "--db", "{db}", "--judge", "x"], 2, "no judge"),
    (["compare-answers", "{pairs}", "--db", "{db}", "--judge", "x"], 2, "no judge model"),
    (["generate", "{docs}", "-o", "{out}", "--db", "{db}", "--judge", "x"], 2, "no judge model"),
    (["generate", "{docs}", "-o", "{out}", "--db", "{db}", "--embedder", "x"], 2, "no embedder"),
]


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(("args", "status", "said"), CASES, ids=lambda c: None)
def test_creates_nothing(tmp_path: Path, args: list[str], status: int, said: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    data = work / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    labels = work / "labels.jsonl"
    labels.write_text(json.dumps({"sample_id": "s0", "metric": "bleu", "label": 1}) + "\n")
    pairs = work / "pairs.jsonl"
    pairs.write_text(json.dumps({"question": "Q?", "answer_a": "A.", "answer_b": "B."}) + "\n")
    (work / "docs").mkdir()
    (work / "docs" / "a.txt").write_text("The Team plan costs 12 euros a month.\n")
    before = listing(work)
    names = {"db": str(work / "typo" / "h.db"), "data": str(data), "labels": str(labels)}
    names |= {"pairs": str(pairs), "docs": str(work / "docs"), "out": str(work / "q.jsonl")}
    result = CliRunner().invoke(main, [a.format(**names) for a in args])
    assert result.exit_code == status, result.output
    assert said in result.output
    assert listing(work) == before
    assert not Path(names["db"]).parent.exists()
