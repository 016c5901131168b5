"""A run stopped part-way (--max-calls, --max-minutes, Ctrl-C) says how to go on, and what it
says continues that run, also after --no-resume; and the numeric options refuse what would
silently mean no limit or no bound (NaN, infinity)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fakes import FakeEmbedder, HashJudge, InterruptingJudge
from standins import StandIns

from localeval.cli import main

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"


def run(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def run_ids() -> list[str]:
    return [line.split()[0] for line in run("runs", "list").stdout.splitlines()[1:]]


@pytest.mark.both_stores
def test_the_way_on_after_a_limit_continues_a_no_resume_run(
    stand_ins: StandIns, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_ins.use(HashJudge(), FakeEmbedder())
    args = ["evaluate", str(DEMO), "--no-resume", "--max-calls", "3", "--no-progress"]
    monkeypatch.setattr(sys, "argv", ["localeval", *args])
    stopped = run(*args)
    assert stopped.exit_code == 124, stopped.output
    (run_id,) = run_ids()
    assert f"re-run the command with --resume {run_id} in place of --no-resume to continue" in (
        stopped.stderr
    )
    way_on = stopped.stderr.rsplit("To go on: ", 1)[1].strip()
    assert way_on == f"localeval evaluate {DEMO} --resume {run_id} --max-calls 3 --no-progress"
    went_on = run(*shlex.split(way_on)[1:])
    assert went_on.exit_code == 124, went_on.output
    assert f"Resuming run {run_id}: 1 of 8 samples were scored" in went_on.stderr
    assert run_ids() == [run_id]  # the same run went on: no new one


@pytest.mark.both_stores
def test_the_way_on_after_ctrl_c_of_a_no_resume_run_names_it(stand_ins: StandIns) -> None:
    stand_ins.use(InterruptingJudge(calls=12), FakeEmbedder())
    stopped = run("evaluate", DEMO, "--no-resume", "--no-progress")
    assert stopped.exit_code == 130
    (run_id,) = run_ids()
    done = int(stopped.stderr.split(" samples scored")[0].split()[-3])
    assert stopped.stderr.endswith(
        f"Run {run_id} is saved with {done} of 8 samples scored; re-run the command with "
        f"--resume {run_id} in place of --no-resume to continue it.\nInterrupted.\n"
    )
    stand_ins.use(HashJudge(), FakeEmbedder())
    went_on = run("evaluate", DEMO, "--resume", run_id, "--no-progress")
    assert went_on.exit_code in (0, 1), went_on.output
    assert run_ids() == [run_id]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--max-minutes", "nan"),
        ("--max-minutes", "inf"),
        ("--max-minutes", "-inf"),
        ("--max-minutes", "0"),
        ("--max-calls", "-1"),
    ],
)
def test_a_budget_that_no_spending_reaches_is_refused(
    stand_ins: StandIns, option: str, value: str
) -> None:
    stand_ins.forbid()
    result = run("evaluate", DEMO, option, value)
    assert (result.exit_code, result.output) == (
        2,
        f"Error: {option} must be more than 0, got {value}\n",
    )


@pytest.mark.parametrize("option", ["--min-support", "--max-overlap", "--max-similarity"])
def test_a_share_of_generate_is_never_nan(stand_ins: StandIns, tmp_path: Path, option: str) -> None:
    stand_ins.forbid()
    (tmp_path / "doc.txt").write_text("Nimbus Drive was founded in 2014.", "utf-8")
    result = run("generate", tmp_path, "-o", tmp_path / "t.jsonl", option, "nan")
    assert result.exit_code == 2
    assert f"Invalid value for '{option}': nan is not in the range 0<=x<=1." in result.stderr


@pytest.mark.parametrize("weight", ["inf", "nan", "-1"])
def test_a_question_mix_weight_must_be_finite(
    stand_ins: StandIns, tmp_path: Path, weight: str
) -> None:
    stand_ins.forbid()
    (tmp_path / "doc.txt").write_text("Nimbus Drive was founded in 2014.", "utf-8")
    result = run("generate", tmp_path, "-o", tmp_path / "t.jsonl", "--mix", f"single_fact={weight}")
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: the question mix needs weights >= 0 that add up to more than 0\n",
    )
