"""The metrics' options are named after their metric (--METRIC-OPTION); the old spellings
still work for a release, hidden from --help, each with a one-line deprecation note."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from standins import StandIns
from test_cli import ROW
from test_rubric import peaked, use_judge, write_data

import localeval
from localeval.cli import main
from localeval.errors import UsageError
from localeval.metrics import REGISTRY, metric_options, take_old_spellings
from localeval.metrics.plugins import options_problem


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_built_in_option_is_named_after_its_metric(name: str) -> None:
    spec = REGISTRY[name]
    # as a plugin's are (the old spellings, a plugin may not have, left aside)
    current = tuple(replace(o, old_flag=None, old_dest=None) for o in spec.options)
    assert options_problem(name, replace(spec, options=current)) is None
    for option in spec.options:  # the dest is the flag's words, as the API takes it
        assert option.dest == option.flag.removeprefix("--").replace("-", "_")


def test_help_shows_the_new_names_and_hides_the_old() -> None:
    result = CliRunner().invoke(main, ["evaluate", "--help"], terminal_width=200)
    assert result.exit_code == 0
    declared = [option for _, option in metric_options()]
    assert all(option.flag in result.output for option in declared)
    old = [option.old_flag for option in declared if option.old_flag]
    shown = [f for f in old if re.search(rf"(?<![\w-]){re.escape(f)}\b", result.output)]
    assert len(old) == 8 and shown == []


def test_the_new_and_the_old_name_set_the_same(stand_ins: StandIns, tmp_path: Path) -> None:
    data = write_data(tmp_path)
    args = ["evaluate", str(data), "-m", "rubric", "--no-progress"]
    for flag in ("--rubric-criterion", "--criterion"):
        judge = use_judge(stand_ins, [peaked(4), peaked(5), {"feedback": "Fine."}])
        result = CliRunner().invoke(main, [*args, flag, "brevity: no padding"])
        assert result.exit_code == 0, result.output
        assert "brevity (no padding)" in judge.prompts[0].user
        note = (
            "Deprecated: --criterion is now --rubric-criterion; the old name will be removed "
            "in a later release.\n"
        )
        assert (note in result.stderr) == (flag == "--criterion")
        assert note not in result.stdout


def test_an_old_switch_is_the_new_one(tmp_path: Path) -> None:
    data = write_data(tmp_path)
    result = CliRunner().invoke(main, ["evaluate", str(data), "-m", "bleu", "--diagnose"])
    assert result.exit_code == 2
    assert result.stderr == (
        "Deprecated: --diagnose is now --answer-correctness-diagnose; the old name will be "
        "removed in a later release.\n"
        "Error: --answer-correctness-diagnose sets answer_correctness; add -m "
        "answer_correctness\n"
    )


def test_an_option_given_by_both_names_is_refused(tmp_path: Path) -> None:
    data = write_data(tmp_path)
    both = ["--ar-questions", "2", "--answer-relevancy-questions", "3"]
    result = CliRunner().invoke(main, ["evaluate", str(data), "-m", "answer_relevancy", *both])
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --answer-relevancy-questions is given twice: also by its old name --ar-questions\n"
    )


def test_unset_old_options_are_dropped() -> None:
    values = {"questions": None, "criterion_options": (), "diagnose": False, "beta": "2"}
    taken, renamed = take_old_spellings(values)
    assert taken == {"answer_correctness_beta": "2"}
    assert [option.old_dest for option in renamed] == ["beta"]


def test_the_api_takes_an_old_name_with_a_deprecation_warning(tmp_path: Path) -> None:
    missing = str(tmp_path / "c.yaml")
    with (
        pytest.warns(DeprecationWarning, match="'criteria_file' is now 'rubric_criteria'"),
        pytest.raises(UsageError, match=r"c\.yaml: criteria file not found"),
    ):
        localeval.evaluate([ROW], ["rubric"], options={"criteria_file": missing}, db=None)
