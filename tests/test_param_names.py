"""The library's messages name a parameter as its caller knows it: the Python keyword
through the API (`min_defined`), the flag on the command line (`--min-defined`), which only
localeval.cli translates (localeval.errors.param)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from standins import StandIns

import localeval
from localeval.cli import main
from localeval.cli.options import flag_of
from localeval.config import load_models_config
from localeval.errors import (
    ConfigError,
    DatasetError,
    UsageError,
    param,
    parameters_named,
    rendered,
    unrendered,
)
from localeval.evaluation.decided import check_deciding_options
from localeval.history.records import skipped_row

ROWS = [
    {
        "sample_id": f"s{i}",
        "question": f"Q{i}?",
        "contexts": ["A b c d."],
        "answer": "A b c d.",
        "reference_answer": "A b c d.",
    }
    for i in range(2)
]


def run(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def data(tmp_path: Path, stand_ins: StandIns) -> Path:
    stand_ins.forbid()  # BLEU needs no model, and every mistake here is found before one loads
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def refused(data: Path, **keywords: Any) -> str:
    """The message of the usage error localeval.evaluate raises."""
    with pytest.raises(UsageError) as raised:
        localeval.evaluate(data, keywords.pop("metrics", ["bleu"]), progress=False, **keywords)
    return str(raised.value)


def test_a_bad_value_names_the_keyword_in_python_and_the_flag_on_the_command_line(
    data: Path,
) -> None:
    result = run("evaluate", data, "-m", "bleu", "--min-defined", "1.5")
    assert result.exit_code == 2
    assert result.stderr == "Error: --min-defined 1.5: must be between 0 and 1\n"
    assert refused(data, min_defined=1.5) == "min_defined 1.5: must be between 0 and 1"


def test_a_metric_option_is_named_by_its_flag_or_its_key_in_options(data: Path) -> None:
    result = run("evaluate", data, "-m", "rubric", "--rubric-criterion", "bad")
    assert result.exit_code == 2
    said = ": expected NAME: DESCRIPTION, e.g. 'tone: polite and free of jargon'"
    assert result.stderr == f"Error: --rubric-criterion 'bad'{said}\n"
    options = {"rubric_criterion": ["bad"]}
    assert refused(data, metrics=["rubric"], options=options) == f"rubric_criterion 'bad'{said}"


def test_an_old_name_is_the_hidden_flag_the_command_line_still_takes(data: Path) -> None:
    """The old name's flag is no rule's: it is read from the command's own options."""
    both = ["--ar-questions", "2", "--answer-relevancy-questions", "3"]
    result = run("evaluate", data, "-m", "answer_relevancy", *both)
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --answer-relevancy-questions is given twice: also by its old name --ar-questions\n"
    )
    options = {"questions": 2, "answer_relevancy_questions": 3}
    message = refused(data, metrics=["answer_relevancy"], options=options)
    assert message == "answer_relevancy_questions is given twice: also by its old name questions"


def test_a_missing_models_file_names_the_models_keyword(data: Path, tmp_path: Path) -> None:
    missing = tmp_path / "none.toml"
    result = run("evaluate", data, "-m", "bleu", "--models", missing)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {missing}: models file not found (pass --models PATH or set LOCALEVAL_MODELS)\n"
    )
    with pytest.raises(ConfigError) as raised:
        localeval.evaluate(data, ["bleu"], models=missing, progress=False)
    assert str(raised.value) == (
        f"{missing}: models file not found (pass models PATH or set LOCALEVAL_MODELS)"
    )


def test_a_history_that_is_not_there_names_the_db_keyword(tmp_path: Path) -> None:
    nowhere = tmp_path / "none.db"
    result = run("diff", "latest~1", "latest", "--db", nowhere)
    assert result.exit_code == 2
    created = f"no run history at {nowhere}: `localeval evaluate DATA` creates it"
    assert result.stderr == f"Error: {created} (or give --db PATH / set LOCALEVAL_DB)\n"
    with pytest.raises(UsageError) as raised:
        localeval.diff("latest~1", "latest", db=nowhere)
    assert str(raised.value) == f"{created} (or give db PATH / set LOCALEVAL_DB)"


def test_a_warning_names_the_keyword_in_python_and_the_flag_on_the_command_line(
    data: Path, stand_ins: StandIns
) -> None:
    judge = load_models_config(stand_ins.models).judge().name
    said = f"{judge} has no effect: no metric of this run (bleu) uses a judge"
    result = run("evaluate", data, "-m", "bleu", "--judge", judge, "--no-progress")
    assert result.exit_code == 0
    assert f"Warning: --judge {said}\n" in result.stderr
    with pytest.warns(localeval.LocalevalWarning) as warned:
        localeval.evaluate(data, ["bleu"], judge=judge, progress=False)
    assert f"judge {said}" in [str(w.message) for w in warned]


def test_options_that_contradict_each_other_are_named_as_keywords_by_the_library() -> None:
    with pytest.raises(UsageError, match=r"^margin applies only with until_decided$"):
        check_deciding_options(until_decided=False, margin=0.1, baseline=False)
    with pytest.raises(UsageError) as raised:
        check_deciding_options(until_decided=True, margin=None, baseline=False)
    assert str(raised.value) == "until_decided compares with a run: give baseline RUN"
    with parameters_named(flag_of):
        assert str(raised.value) == "--until-decided compares with a run: give --baseline RUN"


def test_a_message_keeps_its_parameters_marked_until_it_is_shown() -> None:
    error = UsageError(f"{param('max_calls')} 3, {param('resume=False')}, {param('fit=True')}")
    assert str(error) == "max_calls 3, resume=False, fit=True"
    assert repr(error) == "UsageError('max_calls 3, resume=False, fit=True')"
    with parameters_named(flag_of):
        assert str(error) == "--max-calls 3, --no-resume, --fit"
    # carried to another process (a Ray worker's failure), still rendered where it is shown
    assert str(UsageError(unrendered(error))) == str(error)
    assert rendered(unrendered(error), flag_of) == "--max-calls 3, --no-resume, --fit"
    assert unrendered(ValueError("plain")) == "plain"


def test_a_flag_is_the_running_commands_option_of_that_name() -> None:
    @click.command()
    @click.option("-o", "--output")
    @click.option("--threshold", "thresholds", multiple=True)
    @click.option("--no-resume", "new_run", is_flag=True)
    def command(**given: Any) -> None:
        click.echo(" ".join(flag_of(n) for n in ("output", "thresholds", "new_run", "shard")))

    result = CliRunner().invoke(command, [])
    assert result.stdout == "--output --threshold --no-resume --shard\n"
    assert flag_of("thresholds") == "--thresholds"  # outside a command: the rule alone


def test_a_stored_reason_is_rendered_text() -> None:
    """What results.json keeps holds no mark: it is rendered as it is stored."""
    error = DatasetError("d.jsonl", f"fill it, or give {param('skip_invalid')}", line=3)
    assert skipped_row(error)["reason"] == "fill it, or give skip_invalid"
    with parameters_named(flag_of):
        assert skipped_row(error)["reason"] == "fill it, or give --skip-invalid"
