"""Hostile text: nothing from the data reaches a terminal as an escape sequence, on a terminal
or not; results files written or edited by something else are checked on read, with a
one-line error. BLEU needs no model, so nothing loads here."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from standins import StandIns

from localeval.cli import main

#: an OSC title change and a CSI erase-line, as confirmed with `script` on a terminal
TITLE, ERASE = "\x1b]0;pwned\x07", "\x1b[2K"


def run(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(autouse=True)
def no_models(stand_ins: StandIns) -> None:
    stand_ins.forbid()


def hostile_data(path: Path) -> Path:
    rows = [
        {
            "sample_id": f"{ERASE}id-{i}",
            "category": f"{TITLE}cat" if i % 2 else "plain",
            "question": f"What is {i}?",
            "answer": f"It is {i}.",
            "reference_answer": "It is 1.",
            f"note{TITLE}": "an unknown field whose name is hostile",
        }
        for i in range(4)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_escape_sequences_in_data_are_printed_as_text(tmp_path: Path) -> None:
    data = hostile_data(tmp_path / f"d{ERASE}.jsonl")
    shown_data = str(tmp_path / "d\\x1b[2K.jsonl")
    evaluated = run("evaluate", data, "-m", "bleu", "--no-progress")
    assert evaluated.exit_code == 0, evaluated.output
    assert "category: \\x1b]0;pwned\\x07cat" in evaluated.stdout.splitlines()
    assert evaluated.stderr.splitlines()[:2] == [
        f"Warning: {shown_data}, line 1: unknown field 'note\\x1b]0;pwned\\x07' kept with the "
        "sample but not scored",
        f"Loaded 4 samples from {shown_data}; metrics: bleu",
    ]
    # the answer of one sample changes, so that diff lists it by its id
    changed = data.read_text(encoding="utf-8").replace('"It is 3."', '"It is 1."')
    data.write_text(changed, encoding="utf-8")
    assert run("evaluate", data, "-m", "bleu", "--no-progress").exit_code == 0
    outputs = {
        "list": run("runs", "list"),
        "show": run("runs", "show", "latest"),
        "diff": run("diff", "latest~1", "latest"),
        "md": run("report", "latest", "-f", "md"),
        "junit": run("report", "latest", "-f", "junit", "--junit-samples"),
    }
    for name, result in outputs.items():
        assert result.exit_code == 0, (name, result.output)
        assert "\x1b" not in result.output and "\x07" not in result.output, name
    assert "category: \\x1b]0;pwned\\x07cat" in outputs["show"].stdout.splitlines()
    assert f"dataset:        {shown_data} (sha256 " in outputs["show"].stdout
    mover = [line for line in outputs["diff"].stdout.splitlines() if "id-3" in line]
    assert mover[0].startswith("  bleu  \\x1b[2Kid-3: ")
    assert outputs["list"].stdout.splitlines()[1].endswith(f"  {shown_data}")


def test_runs_merge_prints_hostile_names_as_text(tmp_path: Path) -> None:
    data = hostile_data(tmp_path / "d.jsonl")
    shards = [tmp_path / f"s{k}.json" for k in (1, 2)]
    for k, shard in enumerate(shards, start=1):
        result = run("evaluate", data, "-m", "bleu", "--shard", f"{k}/2", "-o", shard)
        assert result.exit_code == 0, result.output
    db, out = tmp_path / f"h{ERASE}.db", tmp_path / f"m{TITLE}.json"
    merged = run("runs", "merge", *shards, "--db", db, "-o", out)
    assert merged.exit_code == 0, merged.output
    assert "\x1b" not in merged.output and "\x07" not in merged.output
    assert merged.stdout.splitlines()[-2:] == [
        f"Results written to {tmp_path}/m\\x1b]0;pwned\\x07.json",
        f"Merged 2 shards into run {json.loads(out.read_text())['run']['id']} in "
        f"{tmp_path}/h\\x1b[2K.db",
    ]


def test_a_line_break_in_a_name_does_not_break_the_table(tmp_path: Path) -> None:
    rows = [
        {"sample_id": f"s{i}", "category": "two\nlines" if i else "one", "question": "Q?"}
        | {"answer": "A b c.", "reference_answer": "A b c."}
        for i in range(2)
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run("evaluate", data, "-m", "bleu", "--no-progress")
    assert "category: two\\nlines" in result.stdout.splitlines()
    assert "lines" not in [line.strip() for line in result.stdout.splitlines()]


def test_an_error_naming_hostile_text_is_escaped(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": 3, f"x{ERASE}": 1}) + "\n", encoding="utf-8")
    result = run("evaluate", data, "-m", "bleu")
    assert result.exit_code == 2
    assert "\x1b" not in result.output
    missing = run("evaluate", tmp_path / f"no{TITLE}.jsonl", "-m", "bleu")
    assert missing.stderr == f"Error: {tmp_path}/no\\x1b]0;pwned\\x07.jsonl: file not found\n"


@pytest.fixture
def results(tmp_path: Path) -> dict[str, Any]:
    data = tmp_path / "d.jsonl"
    rows = [
        {
            "sample_id": f"s{i}",
            "question": "Q?",
            "answer": "A b c d.",
            "reference_answer": "A b c d.",
        }
        for i in range(3)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "good.json"
    assert run("evaluate", data, "-m", "bleu", "-o", out).exit_code == 0
    loaded: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize(
    ("score", "problem"),
    [
        ("NaN", "NaN is not a JSON value"),
        ("Infinity", "Infinity is not a JSON value"),
        ("-Infinity", "-Infinity is not a JSON value"),
        ("7.5", "sample 2, score 'bleu': 7.5 is not between 0 and 1"),
        ('"0.5"', "sample 2, score 'bleu': \"0.5\" is not a number"),
        ("true", "sample 2, score 'bleu': true is not a number"),
    ],
)
def test_a_results_file_with_a_bad_score_is_refused(
    results: dict[str, Any], tmp_path: Path, score: str, problem: str
) -> None:
    good = tmp_path / "good.json"
    bad = tmp_path / "bad.json"
    results["samples"][1]["scores"]["bleu"] = "PLACEHOLDER"
    bad.write_text(json.dumps(results).replace('"PLACEHOLDER"', score), encoding="utf-8")
    hint = "; write one with `localeval evaluate DATA --output FILE`"
    diff = run("diff", good, bad)
    assert diff.exit_code == 2
    assert (
        diff.stderr
        == f"Error: {bad}: not a localeval results file ({problem})"
        + (hint if "JSON value" in problem else "")
        + "\n"
    )
    report = run("report", bad, "-f", "md")
    assert (report.exit_code, report.stderr) == (
        2,
        f"Error: {bad}: not a localeval results file ({problem}){hint}\n",
    )


def test_a_deeply_nested_results_file_is_a_one_line_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    hint = "; write one with `localeval evaluate DATA --output FILE`"
    for args in (
        ("diff", deep, deep),
        ("report", deep),
        ("evaluate", tmp_path / "x.jsonl", "--baseline", deep),
    ):
        if args[0] == "evaluate":
            (tmp_path / "x.jsonl").write_text('{"question": "Q?"}\n', encoding="utf-8")
            args = (*args, "-m", "bleu")
        result = run(*args)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines()[-1] == (
            f"Error: {deep}: not a localeval results file (it nests too deeply to read){hint}"
        )


def test_scores_are_never_above_one_by_rounding(results: dict[str, Any]) -> None:
    # a perfect match: BLEU 100.00000000000004 / 100 and a cosine of 1.00000007 before
    assert all(s["scores"]["bleu"] == 1.0 for s in results["samples"])
    assert os.environ["LOCALEVAL_DB"]
