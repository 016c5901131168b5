"""What a gate and a comparison may conclude: a sample without a sample_id is the same sample
in two runs when it asks the same question (not when it sits on the same line); a gate does
not pass on a handful of defined scores; an option that would have no effect is an error or
a warning, never ignored. BLEU needs no model, so nothing loads here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from standins import StandIns

from localeval.cli import main
from localeval.config import load_models_config
from localeval.data.samples import load_samples


def run(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def no_models(stand_ins: StandIns) -> None:
    stand_ins.forbid()


QUESTIONS = [f"What is the capital of region {i}?" for i in range(8)]


def rows(questions: list[str]) -> list[dict[str, Any]]:
    """No sample_id; each answer is the reference for some questions only, so that pairing
    the wrong samples moves BLEU."""
    return [
        {
            "question": q,
            "answer": f"The capital of region {q.split()[-1][:-1]} is Town {q.split()[-1][:-1]}.",
            "reference_answer": f"The capital of region {q.split()[-1][:-1]} is Town "
            f"{q.split()[-1][:-1]}.",
        }
        for q in questions
    ]


def test_a_row_without_an_id_is_named_by_its_question(tmp_path: Path) -> None:
    from localeval.data.ids import content_id  # (here: before, there was no such module)

    data = write_rows(tmp_path / "d.jsonl", rows([QUESTIONS[0], QUESTIONS[1], QUESTIONS[0]]))
    assert [s.sample_id for s in load_samples(data)] == [
        content_id(QUESTIONS[0]),
        content_id(QUESTIONS[1]),
        content_id(QUESTIONS[0]) + "-2",  # the same question again: its occurrence number
    ]
    assert content_id(QUESTIONS[0]).startswith("q-") and len(content_id(QUESTIONS[0])) == 14
    # white space and Unicode normalisation do not make another question
    assert content_id("Where is  Cafe\u0301?") == content_id(" Where is Caf\u00e9? ")


def test_an_inserted_row_pairs_nothing_wrongly(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    write_rows(data, rows(QUESTIONS))
    assert run("evaluate", data, "-m", "bleu", "--no-progress").exit_code == 0
    # a new first row: before, every later sample was paired with its predecessor
    write_rows(data, rows(["Which river crosses region 9?", *QUESTIONS]))
    assert run("evaluate", data, "-m", "bleu", "--no-progress").exit_code == 0
    result = run("diff", "latest~1", "latest")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[3] == (
        "Paired by sample_id: 8 samples in both runs, 1 added (only in NEW), 0 removed "
        "(only in BASE, not compared)."
    )
    bleu = next(line for line in lines if line.startswith("bleu "))
    assert bleu.split() == [
        "bleu",
        "1.000",
        "1.000",
        "+0.000",
        "[+0.000,",
        "+0.000]",
        "8",
        "no",
        "detectable",
        "change",
    ]
    assert "No sample's score changed." in lines


def test_a_gate_needs_most_samples_defined(tmp_path: Path) -> None:
    # 9 of 10 samples have no reference: BLEU is undefined for them
    data = write_rows(
        tmp_path / "d.jsonl",
        [
            {"question": f"Q{i}?", "answer": "The item is red and round."}
            | ({"reference_answer": "The item is red and round."} if i == 0 else {})
            for i in range(10)
        ],
    )
    out = tmp_path / "r.json"
    result = run("evaluate", data, "-m", "bleu", "--threshold", "bleu=0.5", "-o", out)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[3:5] == [
        "Quality gates:",
        "  FAIL  bleu = 1.000 from only 1 of 10 samples (9 undefined): a gate needs at least "
        "50% of the samples scored (--min-defined). The mean of so few is no evidence; each "
        "undefined sample's undefined_reason in results.json says what it lacks.",
    ]
    (gate,) = json.loads(out.read_text())["gates"]
    assert gate == {
        "metric": "bleu",
        "threshold": 0.5,
        "value": 1.0,
        "passed": False,
        "n_defined": 1,
        "n_undefined": 9,
        "min_defined": 0.5,
        "reason": "bleu = 1.000 from only 1 of 10 samples (9 undefined): a gate needs at least "
        "50% of the samples scored (--min-defined)",
    }
    shown = run("runs", "show", "latest")
    assert "  FAIL  bleu = 1.000 from only 1 of 10 samples (9 undefined)" in shown.stdout
    lenient = run("evaluate", data, "-m", "bleu", "--threshold", "bleu=0.5", "--min-defined", "0.1")
    assert lenient.exit_code == 0
    assert "  PASS  bleu = 1.000 >= 0.50" in lenient.stdout
    bad = run("evaluate", data, "-m", "bleu", "--min-defined", "2")
    assert (bad.exit_code, bad.stderr) == (2, "Error: --min-defined 2: must be between 0 and 1\n")


def test_a_threshold_on_a_metric_not_run_is_an_error(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "d.jsonl", rows(QUESTIONS[:2]))
    result = run("evaluate", data, "-m", "bleu", "--threshold", "faithfulness=0.9")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --threshold faithfulness=0.9: faithfulness is not among the metrics of this run "
        "(bleu); add -m faithfulness, or leave the threshold out\n"
    )


def test_a_threshold_given_twice_is_an_error(tmp_path: Path, isolated_database: Path) -> None:
    """The last would win silently; the command refuses before it touches the database."""
    data = write_rows(tmp_path / "d.jsonl", rows(QUESTIONS[:2]))
    twice = ("--threshold", "bleu=0.9", "--threshold", "bleu=0.1")
    result = run("evaluate", data, "-m", "bleu", *twice)
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --threshold 'bleu=0.9' and --threshold 'bleu=0.1' both set the gate of bleu; "
        "give it once\n"
    )
    assert not isolated_database.exists()


def test_a_judge_or_embedder_no_metric_uses(tmp_path: Path, stand_ins: StandIns) -> None:
    data = write_rows(tmp_path / "d.jsonl", rows(QUESTIONS[:2]))
    default = load_models_config(stand_ins.models).judge().name  # the project's default judge
    unknown = run("evaluate", data, "-m", "bleu", "--judge", "nope")
    assert unknown.exit_code == 2
    assert unknown.stderr.endswith(
        f"Error: no judge model named 'nope' in {stand_ins.models} (known: {default})\n"
    )
    known = run("evaluate", data, "-m", "bleu", "--judge", default, "--no-progress")
    assert known.exit_code == 0
    assert (
        f"Warning: --judge {default} has no effect: no metric of this run (bleu) uses a judge\n"
        in known.stderr
    )
    embedder = run("evaluate", data, "-m", "bleu", "--embedder", "all-minilm-l6-v2")
    assert (
        "Warning: --embedder all-minilm-l6-v2 has no effect: no metric of this run (bleu) uses "
        "an embedder\n" in embedder.stderr
    )


def test_runs_show_lists_only_the_thresholds_of_metrics_run(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "d.jsonl", rows(QUESTIONS[:2]))
    assert run("evaluate", data, "-m", "bleu", "-m", "rouge_l").exit_code == 0
    shown = run("runs", "show", "latest").stdout.splitlines()
    assert "thresholds:     -" in shown
    assert run("evaluate", data, "-m", "bleu", "--threshold", "bleu=0.2").exit_code == 0
    assert "thresholds:     bleu 0.20" in run("runs", "show", "latest").stdout.splitlines()
