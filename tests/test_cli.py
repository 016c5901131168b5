"""The command line: exit codes, messages, and the results.json contract."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakes import FakeEmbedder, ScriptedJudge
from standins import StandIns, models_toml

from localeval.cli import main
from localeval.prediction_powered import MIN_LABELLED

QUESTION = "When was the tower finished?"
ROW = {
    "sample_id": "q1",
    "category": "history",
    "question": QUESTION,
    "contexts": ["The tower was finished in 1889."],
    "answer": "It was finished in 1889.",
    "reference_answer": "The tower was finished in 1889.",
}


def good_answers() -> list[Any]:
    # faithfulness (1 statement), recall (1 sentence), relevancy: noncommittal
    # probability, does it answer (precision: embedder only)
    return [0.95, 0.9, 0.05, 0.97]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    return path


def use_fakes(stand_ins: StandIns, answers: list[Any]) -> ScriptedJudge:
    """The scripted judge and the fake embedder, selected by name as the default models."""
    judge: ScriptedJudge = stand_ins.use(ScriptedJudge(answers), FakeEmbedder())
    return judge


def test_evaluate_passes_gates_and_writes_contract(
    stand_ins: StandIns, data: Path, tmp_path: Path
) -> None:
    judge = use_fakes(stand_ins, good_answers())
    out = tmp_path / "results.json"
    result = CliRunner().invoke(main, ["evaluate", str(data), "--output", str(out)])
    assert result.exit_code == 0, result.output
    judge.assert_done()
    # the default gate: no judge of the project's models.toml carries thresholds of its own
    assert "PASS  faithfulness = 0.950 >= 0.80" in result.stdout
    report = json.loads(out.read_text())
    # an ordinary file (the umask's mode), not a private temporary one; nothing left beside it
    assert out.stat().st_mode & stat.S_IRGRP
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert set(report) >= {"run", "summary", "gates", "samples"}
    assert set(report["run"]) >= {"id", "created", "judge", "embedder", "metrics", "usage"}
    assert set(report["run"]["usage"]) >= {
        "judge_calls",
        "cached_calls",
        "prompt_tokens",
        "generated_tokens",
        "seconds",
    }
    assert report["run"]["usage"]["judge_calls"] == 4
    assert report["summary"]["faithfulness"]["mean"] == pytest.approx(0.95)
    assert set(report["summary"]["faithfulness"]) == {
        "mean",
        "n",
        "n_undefined",
        "ci95",
        "corrected",
        "labels_needed",
        "labels_not_counted",
        "labels_disagreeing",
    }
    (sample,) = report["samples"]
    assert sample["sample_id"] == "q1" and sample["category"] == "history"
    assert sample["details"]["faithfulness"]["statements"] == ["It was finished in 1889."]
    assert {g["metric"] for g in report["gates"]} == {
        "faithfulness",
        "answer_relevancy",
        "context_recall",
        "context_precision",
    }


def test_failing_gate_exits_1_with_cause_and_remedy(stand_ins: StandIns, data: Path) -> None:
    answers = good_answers()
    answers[0] = 0.2  # faithfulness
    use_fakes(stand_ins, answers)
    result = CliRunner().invoke(main, ["evaluate", str(data)])
    assert result.exit_code == 1
    assert (
        "FAIL  faithfulness = 0.200, below the threshold 0.80. Likely cause: the generator "
        "invents beyond the retrieved context." in result.stdout
    )
    assert "require citations of the context" in result.stdout


def test_threshold_override(stand_ins: StandIns, data: Path) -> None:
    answers = good_answers()
    answers[0] = 0.2
    use_fakes(stand_ins, answers)
    result = CliRunner().invoke(main, ["evaluate", str(data), "--threshold", "faithfulness=0.1"])
    assert result.exit_code == 0, result.output
    assert "PASS  faithfulness = 0.200 >= 0.10" in result.stdout


def models_file(tmp_path: Path, thresholds: str = "") -> Path:
    models = tmp_path / "models.toml"
    models.write_text(models_toml(thresholds))
    return models


def test_a_judge_without_thresholds_is_gated_at_specs_defaults(
    stand_ins: StandIns, data: Path, tmp_path: Path
) -> None:
    use_fakes(stand_ins, good_answers())
    models = models_file(tmp_path)
    result = CliRunner().invoke(main, ["evaluate", str(data), "--models", str(models)])
    assert result.exit_code == 0, result.output
    assert "Quality gates:\n  PASS  context_precision = 1.000 >= 0.65" in result.stdout
    assert "PASS  faithfulness = 0.950 >= 0.80" in result.stdout


def test_a_judges_own_thresholds_replace_specs_and_are_said(
    stand_ins: StandIns, data: Path, tmp_path: Path
) -> None:
    answers = good_answers()
    answers[0] = 0.6  # faithfulness: fails the default 0.80, passes the judge's 0.55
    use_fakes(stand_ins, answers)
    models = models_file(tmp_path, "faithfulness = 0.55\ncontext_precision = 0.99")
    result = CliRunner().invoke(main, ["evaluate", str(data), "--models", str(models)])
    assert result.exit_code == 0, result.output
    assert (
        "Quality gates (thresholds for faithfulness on judge j's scale, from models.toml):"
        in result.stdout
    )
    assert "PASS  faithfulness = 0.600 >= 0.55" in result.stdout
    # context precision asks the embedder, not the judge: the judge's scale does not apply
    assert "PASS  context_precision = 1.000 >= 0.65" in result.stdout
    # --threshold wins over both
    use_fakes(stand_ins, answers)
    result = CliRunner().invoke(
        main,
        ["evaluate", str(data), "--models", str(models), "--threshold", "faithfulness=0.7"],
    )
    assert result.exit_code == 1
    assert "Quality gates:\n" in result.stdout and "below the threshold 0.70" in result.stdout


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("faithfulnes = 0.5", "unknown metric 'faithfulnes' (known: "),
        ("faithfulness = 1.5", "'faithfulness' must be a number between 0 and 1"),
        ('faithfulness = "high"', "'faithfulness' must be a number between 0 and 1"),
    ],
)
def test_bad_judge_thresholds_are_one_line_errors(
    tmp_path: Path, data: Path, table: str, message: str
) -> None:
    models = models_file(tmp_path, table)
    result = CliRunner().invoke(main, ["evaluate", str(data), "--models", str(models)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {models} [judges.j.thresholds]: {message}")


def test_single_metric(stand_ins: StandIns, data: Path) -> None:
    judge = use_fakes(stand_ins, [0.95])
    result = CliRunner().invoke(main, ["evaluate", str(data), "-m", "faithfulness"])
    assert result.exit_code == 0, result.output
    judge.assert_done()
    assert "context_recall" not in result.stdout


def test_undefined_scores_are_counted(stand_ins: StandIns, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({**ROW, "reference_answer": None}) + "\n")
    use_fakes(stand_ins, [])
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        main, ["evaluate", str(path), "-m", "context_recall", "-o", str(out)]
    )
    assert result.exit_code == 1  # a gate with no defined score fails
    report = json.loads(out.read_text())
    assert report["summary"]["context_recall"] == {
        "mean": None,
        "n": 0,
        "n_undefined": 1,
        "ci95": None,
        "corrected": None,
        "labels_needed": MIN_LABELLED,
        "labels_not_counted": {"chosen": 0, "incomplete": 0},
        "labels_disagreeing": 0,
    }
    assert report["samples"][0]["scores"] == {"context_recall": None}
    assert report["samples"][0]["details"]["context_recall"] == {
        "undefined_reason": "no reference_answer"
    }


def test_bad_input_exits_2_before_loading_models(stand_ins: StandIns, tmp_path: Path) -> None:
    stand_ins.forbid()
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + json.dumps({**ROW, "contexts": "text"}) + "\n")
    result = CliRunner().invoke(main, ["evaluate", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {path}, line 2, field 'contexts': must be a list of strings, got a string\n"
    )


def test_unknown_metric_and_bad_threshold_exit_2(stand_ins: StandIns, data: Path) -> None:
    stand_ins.forbid()
    result = CliRunner().invoke(main, ["evaluate", str(data), "-m", "fluency"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: unknown metric 'fluency' (known: answer_correctness")
    result = CliRunner().invoke(main, ["evaluate", str(data), "--threshold", "faithfulness=2"])
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --threshold 'faithfulness=2': the value must be between 0 and 1\n"
    )


def test_unwritable_output_fails_before_models(
    stand_ins: StandIns, data: Path, tmp_path: Path
) -> None:
    stand_ins.forbid()
    out = tmp_path / "missing" / "r.json"
    result = CliRunner().invoke(main, ["evaluate", str(data), "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr == f"Error: --output {out}: folder {out.parent} does not exist\n"


def test_read_only_output_folder_fails_before_models(
    monkeypatch: pytest.MonkeyPatch, data: Path, tmp_path: Path, stand_ins: StandIns
) -> None:
    # chmod cannot make a folder read-only for root (the CI user), so the check is faked
    stand_ins.forbid()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if Path(p) == tmp_path else real_access(p, mode)
    )
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["evaluate", str(data), "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr == f"Error: --output {out}: folder {tmp_path} is not writable\n"
    assert not out.exists()


def test_internal_error_exits_3_without_traceback(
    monkeypatch: pytest.MonkeyPatch, data: Path, stand_ins: StandIns
) -> None:
    class BrokenJudge(ScriptedJudge):
        def yes_probability(self, prompt: object) -> float:
            raise RuntimeError("boom")

    stand_ins.use(BrokenJudge())
    monkeypatch.delenv("LOCALEVAL_DEBUG", raising=False)
    result = CliRunner().invoke(main, ["evaluate", str(data), "-m", "faithfulness"])
    assert result.exit_code == 3
    assert "Internal error: RuntimeError: boom" in result.stderr
    assert "Traceback" not in result.output


def test_missing_model_file_is_one_line_error(tmp_path: Path, data: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(
        'default_judge = "j"\ndefault_embedder = "e"\n'
        '[judges.j]\npath = "nowhere.gguf"\n[embedders.e]\npath = "nowhere"\n'
    )
    result = CliRunner().invoke(
        main, ["evaluate", str(data), "-m", "faithfulness", "--models", str(models)]
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: judge model 'j' {tmp_path / 'nowhere.gguf'}: file not found. Run "
        "scripts/setup.sh to provision it, or fix its path/sha256 in models.toml."
    )


def test_corrupt_model_file_is_refused(tmp_path: Path, data: Path) -> None:
    (tmp_path / "bad.gguf").write_bytes(b"not a gguf at all, just text" * 10)
    models = tmp_path / "models.toml"
    models.write_text('[judges.j]\npath = "bad.gguf"\n[embedders.e]\npath = "x"\n')
    result = CliRunner().invoke(
        main, ["evaluate", str(data), "-m", "faithfulness", "--models", str(models)]
    )
    assert result.exit_code == 2
    assert "is not a GGUF file (bad magic number)" in result.stderr


def test_models_command_lists_status(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text('[judges.j]\npath = "j.gguf"\n[embedders.e]\npath = "e"\n')
    result = CliRunner().invoke(main, ["models", "--models", str(models)])
    assert result.exit_code == 0
    assert "* j" in result.stdout and "PROBLEM: file not found" in result.stdout
    assert "gates on its scale" not in result.stdout
    models = models_file(tmp_path, "faithfulness = 0.57\nanswer_relevancy = 0.49")
    result = CliRunner().invoke(main, ["models", "--models", str(models)])
    assert "gates on its scale: faithfulness >= 0.57, answer_relevancy >= 0.49\n" in result.stdout


def test_unknown_judge_name(tmp_path: Path, data: Path) -> None:
    result = CliRunner().invoke(
        main, ["evaluate", str(data), "-m", "faithfulness", "--judge", "gpt-9"]
    )
    assert result.exit_code == 2
    assert "no judge model named 'gpt-9'" in result.stderr


def test_python_dash_m_localeval_runs_the_command_line() -> None:
    # for a virtual environment whose scripts folder is not on PATH
    done = subprocess.run(
        [sys.executable, "-m", "localeval", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "evaluate" in done.stdout


def test_results_name_the_versions_that_change_numbers(
    stand_ins: StandIns, data: Path, tmp_path: Path
) -> None:
    from importlib import metadata

    use_fakes(stand_ins, good_answers())
    out = tmp_path / "results.json"
    result = CliRunner().invoke(main, ["evaluate", str(data), "--output", str(out)])
    assert result.exit_code == 0, result.output
    software = json.loads(out.read_text())["run"]["software"]
    assert software["python"] == ".".join(map(str, sys.version_info[:3]))
    # each as installed here (torch's local label "+cpu" included)
    for name in ("llama-cpp-python", "torch", "sentence-transformers", "transformers"):
        assert software[name] == metadata.version(name)
    assert software["localeval"] == metadata.version("localeval")
    # the run's history keeps them: the run shown later says the same
    again = tmp_path / "again.json"
    shown = CliRunner().invoke(main, ["runs", "show", "latest", "-o", str(again)])
    assert shown.exit_code == 0, shown.output
    assert json.loads(again.read_text())["run"]["software"] == software
