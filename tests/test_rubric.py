"""The rubric judge: expected scores from the score distribution, criteria from files and
options with clear errors, per-criterion scores and summaries in the CLI's results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakes import ScriptedJudge
from standins import StandIns

from localeval.cli import main
from localeval.data.criteria import (
    DEFAULT_CRITERIA,
    Criterion,
    criteria_from_options,
    load_criteria_file,
)
from localeval.data.samples import Sample
from localeval.errors import UsageError
from localeval.metrics import Tools, build_metric
from localeval.metrics.rubric import Rubric, criterion_scores
from localeval.results.summary import ScoreColumns

SAMPLE = Sample(
    "s1",
    "When was the tower finished?",
    contexts=["The tower was finished in 1889."],
    answer="It was finished in 1889.",
    reference_answer="In 1889.",
)


def peaked(score: int, weight: float = 1.0) -> list[float]:
    """A distribution over 0..10 with `weight` on `score` and the rest on 0."""
    values = [0.0] * 11
    values[score] += weight
    values[0] += 1.0 - weight
    return values


def rubric_answers(feedback: str = "Correct and short.") -> list[Any]:
    # accuracy, completeness, clarity, overall, feedback
    return [peaked(9), peaked(8, 0.5), peaked(10), peaked(7), {"feedback": feedback}]


def test_scores_are_expected_values_of_the_distribution() -> None:
    judge = ScriptedJudge(rubric_answers())
    result = Rubric().score(SAMPLE, Tools(judge=judge))
    judge.assert_done()
    assert result.score == pytest.approx(0.7)
    criteria = result.details["criteria"]
    assert list(criteria) == ["accuracy", "completeness", "clarity"]
    assert criteria["accuracy"]["score"] == pytest.approx(9.0)
    # half the mass on 8 and half on 0: expected 4, although 8 and 0 tie as most likely
    assert criteria["completeness"]["score"] == pytest.approx(4.0)
    assert criteria["completeness"]["description"] == DEFAULT_CRITERIA[1].description
    assert result.details["overall"]["most_likely"] == 7
    assert result.details["feedback"] == "Correct and short."
    assert criterion_scores(result.details) == {
        "rubric.accuracy": pytest.approx(0.9),
        "rubric.completeness": pytest.approx(0.4),
        "rubric.clarity": pytest.approx(1.0),
    }


def test_prompts_share_the_sample_and_ask_one_criterion_each() -> None:
    judge = ScriptedJudge(rubric_answers())
    Rubric().score(SAMPLE, Tools(judge=judge))
    prompts = judge.prompts
    shared = prompts[0].segments[:-1]
    assert all(p.segments[:-1] == shared for p in prompts)  # contexts, question, answer
    assert "The tower was finished in 1889." in "".join(shared)
    assert "Reference answer: In 1889." in shared[-1]
    assert "accuracy (the facts in the answer are correct)" in prompts[0].segments[-1]
    assert "overall" in prompts[3].segments[-1]
    assert all(p.reply_prefix == "Score: " for p in prompts[:4])


def test_custom_criteria_are_asked_in_order() -> None:
    criteria = (Criterion("tone", "polite and plain"), Criterion("brevity", "no padding"))
    judge = ScriptedJudge([peaked(6), peaked(2), peaked(5), {"feedback": "Too terse."}])
    metric = build_metric("rubric", {"rubric": {"criteria": criteria}})
    result = metric.score(SAMPLE, Tools(judge=judge))
    judge.assert_done()
    assert list(result.details["criteria"]) == ["tone", "brevity"]
    assert "tone (polite and plain)" in judge.prompts[0].user


def test_undefined_without_answer_and_counted_per_criterion() -> None:
    result = Rubric().score(Sample("s", "q?"), Tools(judge=ScriptedJudge([])))
    assert result.score is None and result.reason == "no answer"
    assert criterion_scores(result.details) == {}
    judge = ScriptedJudge(rubric_answers())
    defined = Rubric().score(SAMPLE, Tools(judge=judge))
    columns = ScoreColumns.of(["a", "b"], [None, None], {"rubric": [defined.score, None]})
    details = [{"rubric": defined.details}, {"rubric": result.details}]
    summaries = columns.with_sub_scores(["rubric"], details).summaries()
    assert list(summaries) == ["rubric", *(f"rubric.{c.name}" for c in DEFAULT_CRITERIA)]
    assert summaries["rubric.accuracy"].n == 1 and summaries["rubric.accuracy"].n_undefined == 1


# -- criteria files and options ----------------------------------------------------------


def test_criteria_from_toml_and_yaml(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('[criteria]\ntone = "polite"\n"brevity" = "no padding"\n', "utf-8")
    yaml = tmp_path / "c.yaml"
    yaml.write_text("criteria:\n  tone: polite\n  brevity: no padding\n", "utf-8")
    expected = (Criterion("tone", "polite"), Criterion("brevity", "no padding"))
    assert load_criteria_file(toml) == expected
    assert load_criteria_file(yaml) == expected


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("c.toml", '[criteria]\ntone = "polite"\nBad Name = "x"\n', "line 3, column 5"),
        ("c.toml", '[criteria]\ntone = "polite"\nbrevity = 3\n', "line 3: criterion 'brevity'"),
        ("c.toml", '[other]\ntone = "x"\n', "no [criteria] table found"),
        ("c.toml", "[criteria]\n", "no criteria given"),
        ("c.yaml", "criteria:\n  tone: polite\n  Tone2: x\n", "line 3: criterion name 'Tone2'"),
        ("c.yaml", "criteria:\n  tone: [a, b]\n", "line 2: criterion 'tone': the description"),
        ("c.yaml", "criteria:\n  tone: ''\n", "line 2: criterion 'tone': the description is empty"),
        ("c.yaml", "criteria:\n  tone: a\n  tone: b\n", "line 3: criterion 'tone' is given twice"),
        ("c.yaml", "criteria: [\n", "not valid YAML"),
        ("c.json", "{}", "must end in .toml, .yaml or .yml"),
    ],
)
def test_criteria_file_errors_name_file_and_line(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    with pytest.raises(UsageError) as error:
        load_criteria_file(path)
    assert str(error.value).startswith(str(path))
    assert message in str(error.value)


def test_criterion_options() -> None:
    assert criteria_from_options(["tone: polite and plain"]) == (
        Criterion("tone", "polite and plain"),
    )
    with pytest.raises(UsageError, match="expected NAME: DESCRIPTION"):
        criteria_from_options(["tone"])
    with pytest.raises(UsageError, match="'tone' is given more than once"):
        criteria_from_options(["tone: a", "tone: b"])
    with pytest.raises(UsageError, match="the description is empty"):
        criteria_from_options(["tone:  "])


# -- the command line --------------------------------------------------------------------


def write_data(tmp_path: Path) -> Path:
    row = {
        "sample_id": "q1",
        "question": SAMPLE.question,
        "contexts": SAMPLE.contexts,
        "answer": SAMPLE.answer,
        "reference_answer": SAMPLE.reference_answer,
    }
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def use_judge(stand_ins: StandIns, answers: list[Any]) -> ScriptedJudge:
    judge: ScriptedJudge = stand_ins.use(ScriptedJudge(answers))
    return judge


def test_cli_rubric_reports_each_criterion(stand_ins: StandIns, tmp_path: Path) -> None:
    judge = use_judge(stand_ins, rubric_answers())
    out = tmp_path / "results.json"
    data = write_data(tmp_path)
    result = CliRunner().invoke(
        main, ["evaluate", str(data), "-m", "rubric", "-o", str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    judge.assert_done()
    assert "rubric.completeness   0.400" in result.output
    report = json.loads(out.read_text("utf-8"))
    assert report["samples"][0]["scores"] == {
        "rubric": pytest.approx(0.7),
        "rubric.accuracy": pytest.approx(0.9),
        "rubric.completeness": pytest.approx(0.4),
        "rubric.clarity": pytest.approx(1.0),
    }
    assert report["samples"][0]["details"]["rubric"]["overall"]["score"] == pytest.approx(7.0)
    assert set(report["summary"]) == {
        "rubric",
        "rubric.accuracy",
        "rubric.completeness",
        "rubric.clarity",
    }


def test_cli_criteria_file_and_inline(stand_ins: StandIns, tmp_path: Path) -> None:
    data = write_data(tmp_path)
    criteria = tmp_path / "criteria.toml"
    criteria.write_text('[criteria]\ntone = "polite and plain"\n', "utf-8")
    judge = use_judge(stand_ins, [peaked(4), peaked(5), {"feedback": "Fine."}])
    args = ["evaluate", str(data), "-m", "rubric", "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--rubric-criteria", str(criteria)])
    assert result.exit_code == 0, result.output
    assert "rubric.tone" in result.output and "tone (polite and plain)" in judge.prompts[0].user
    judge = use_judge(stand_ins, [peaked(4), peaked(5), {"feedback": "Fine."}])
    result = CliRunner().invoke(main, [*args, "--rubric-criterion", "brevity: no padding"])
    assert result.exit_code == 0, result.output
    assert "brevity (no padding)" in judge.prompts[0].user


def test_cli_criteria_misuse_exits_2(stand_ins: StandIns, tmp_path: Path) -> None:
    data = write_data(tmp_path)
    use_judge(stand_ins, [])
    missing = CliRunner().invoke(
        main,
        ["evaluate", str(data), "-m", "rubric", "--rubric-criteria", str(tmp_path / "no.toml")],
    )
    assert missing.exit_code == 2
    assert f"Error: {tmp_path / 'no.toml'}: criteria file not found" in missing.output
    without_rubric = CliRunner().invoke(
        main, ["evaluate", str(data), "-m", "bleu", "--rubric-criterion", "tone: polite"]
    )
    assert without_rubric.exit_code == 2
    assert "add -m rubric" in without_rubric.output


def test_feedback_is_kept_to_one_sentence() -> None:
    judge = ScriptedJudge(rubric_answers("Accurate. But it could cite the source"))
    result = Rubric().score(SAMPLE, Tools(judge=judge))
    assert result.details["feedback"] == "Accurate."
    judge = ScriptedJudge(rubric_answers("回答准确。但缺少来源"))
    assert Rubric().score(SAMPLE, Tools(judge=judge)).details["feedback"] == "回答准确。"


def test_criteria_are_part_of_the_run_settings() -> None:
    from localeval.engine import metric_settings

    custom = build_metric("rubric", {"rubric": {"criteria": (Criterion("tone", "polite"),)}})
    assert metric_settings(custom) == {"criteria_text": "tone: polite"}
    assert metric_settings(Rubric())["criteria_text"].startswith("accuracy: the facts")
