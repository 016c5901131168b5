"""`evaluate --until-decided` with metrics whose inputs did not change: in a prompt-tuning
loop only the answers change, so a metric that reads none of them (context precision,
context recall) is "no change" without a test and never holds the stop back, unless a
field it reads changed in a pair or the runs scored it differently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fakes import UNSUPPORTED, FakeEmbedder, HashJudge
from standins import StandIns, models_toml

from localeval.cli import main
from localeval.judge import Prompt
from localeval.results.comparability import comparability_warnings, scored_alike
from localeval.results.decision import NO_CHANGE, SAME_INPUTS, UNDECIDED, WORSE

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"
N_SAMPLES = 60
CONTEXT_METRICS = ("context_precision", "context_recall")
NOT_TESTED = "(its inputs are the same in every pair: not tested)"


class InventionJudge(HashJudge):
    """The hash judge, saying No to whatever shows an invented answer: faithfulness and
    answer relevancy both fall when the answers invent."""

    def yes_probability(self, prompt: Prompt) -> float:
        found = super().yes_probability(prompt)
        return 0.01 if UNSUPPORTED in prompt.user else found


@pytest.fixture(autouse=True)
def hash_judge(stand_ins: StandIns, tmp_path_factory: pytest.TempPathFactory) -> HashJudge:
    models = tmp_path_factory.mktemp("models") / "models.toml"
    models.write_text(models_toml())
    stand_ins.models = models
    judge = InventionJudge()
    stand_ins.use(judge, FakeEmbedder())
    return judge


def run(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def words(text: str) -> str:
    return " ".join(text.split())


def rows(invented: bool = False) -> list[dict[str, Any]]:
    """N_SAMPLES samples made from the demo's rows; `invented`: a new version of their
    answers, each claiming what the contexts do not say (questions, contexts and references
    the same)."""
    demo = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]
    made = []
    for i in range(N_SAMPLES):
        row = dict(demo[i % len(demo)], sample_id=f"s-{i}")
        row["answer"] = (
            f"It includes {UNSUPPORTED} free support calls ({i})."
            if invented
            else f"{row['answer']} (Answer {i}.)"
        )
        made.append(row)
    return made


def write(path: Path, samples: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in samples), encoding="utf-8")
    return path


def decide(
    tmp_path: Path, new: list[dict[str, Any]], *args: Any, base: Any = "latest"
) -> tuple[Result, dict[str, Any]]:
    """NEW against the `base` run, with the default metrics; its results.json."""
    out = tmp_path / "new.json"
    data = write(tmp_path / "new.jsonl", new)
    result = run("evaluate", data, "--baseline", base, "--until-decided", "-o", out, *args)
    return result, json.loads(out.read_text(encoding="utf-8"))


def baseline(tmp_path: Path, samples: list[dict[str, Any]] | None = None) -> Path:
    """The base run of the default metrics (their gates may fail the hash judge)."""
    out = tmp_path / "base.json"
    result = run("evaluate", write(tmp_path / "base.jsonl", samples or rows()), "-o", out)
    assert result.exit_code in (0, 1), result.output
    return out


@pytest.mark.both_stores
def test_only_answers_changed_stops_on_the_metrics_that_read_them(tmp_path: Path) -> None:
    baseline(tmp_path)
    decided, results = decide(tmp_path, rows(invented=True))
    assert decided.exit_code == 1, decided.output  # faithfulness is worse
    until = results["run"]["until_decided"]
    assert until["verdicts"] == {
        "context_precision": NO_CHANGE,
        "faithfulness": WORSE,
        "context_recall": NO_CHANGE,
        "answer_relevancy": WORSE,
    }
    assert until["not_tested"] == dict.fromkeys(CONTEXT_METRICS, SAME_INPUTS)
    assert 0 < until["samples_scored"] < N_SAMPLES  # the context metrics alone need ~150
    assert sorted(until["metrics"]) == ["answer_relevancy", "faithfulness"]
    assert until["alpha_per_metric"] == pytest.approx(0.05 / 2)  # split over the tested two
    said = words(decided.stdout)
    assert f"Decided after {until['samples_scored']} of {N_SAMPLES} samples" in said
    assert "the 5% split over 2 metrics" in said
    assert f"context_recall no change {NOT_TESTED}" in said
    shown = words(run("runs", "show", results["run"]["id"]).stdout)
    assert f"context_precision no change {NOT_TESTED}" in shown
    markdown = run("report", tmp_path / "new.json", "-f", "md").stdout
    assert NOT_TESTED in markdown


def test_a_context_changed_in_one_pair_keeps_both_context_metrics_tested(
    tmp_path: Path,
) -> None:
    baseline(tmp_path)
    new = rows(invented=True)
    new[7]["contexts"] = [*new[7]["contexts"], "Support calls are free on every plan."]
    decided, results = decide(tmp_path, new)
    until = results["run"]["until_decided"]
    assert until["not_tested"] == {}
    assert {m: until["verdicts"][m] for m in CONTEXT_METRICS} == dict.fromkeys(
        CONTEXT_METRICS, UNDECIDED
    )
    assert until["samples_scored"] == N_SAMPLES and until["alpha_per_metric"] == 0.05 / 4
    assert NOT_TESTED not in words(decided.stdout)


def test_a_sample_without_a_reference_has_context_precision_read_its_answer(
    tmp_path: Path,
) -> None:
    """Context precision judges the chunks against the answer when there is no reference
    (beyond its `needs`): answers changed, it may have changed too; context recall not."""
    base = rows()
    base[3]["reference_answer"] = None
    baseline(tmp_path, base)
    new = rows(invented=True)
    new[3]["reference_answer"] = None
    _, results = decide(tmp_path, new)
    until = results["run"]["until_decided"]
    assert until["not_tested"] == {"context_recall": SAME_INPUTS}
    assert "context_precision" in until["metrics"]


def test_a_baseline_scored_with_other_judge_settings_keeps_every_metric_tested(
    tmp_path: Path, hash_judge: HashJudge
) -> None:
    hash_judge.settings = {"n_batch": 256}  # type: ignore[attr-defined]
    baseline(tmp_path)
    hash_judge.settings = {"n_batch": 512}  # type: ignore[attr-defined]
    decided, results = decide(tmp_path, rows(invented=True))
    until = results["run"]["until_decided"]
    assert until["not_tested"] == {}
    assert sorted(until["metrics"]) == sorted(until["verdicts"])
    assert "the judge ran with different settings" in words(decided.stdout)


def test_a_baseline_file_without_the_inputs_keeps_every_metric_tested(tmp_path: Path) -> None:
    """Inputs that BASE does not hold are unknown, not the same."""
    kept = json.loads(baseline(tmp_path).read_text(encoding="utf-8"))
    for sample in kept["samples"]:
        del sample["contexts"]
    older = tmp_path / "older.json"
    older.write_text(json.dumps(kept), encoding="utf-8")
    out = tmp_path / "new.json"
    data = write(tmp_path / "new.jsonl", rows(invented=True))
    args = ["--baseline", older, "--until-decided", "-o", out]
    assert run("evaluate", data, *args).exit_code == 1
    until = json.loads(out.read_text(encoding="utf-8"))["run"]["until_decided"]
    assert until["not_tested"] == {}


def test_every_gated_metric_unchanged_is_decided_before_a_sample_is_scored(
    tmp_path: Path, hash_judge: HashJudge
) -> None:
    gated = ["-m", "context_recall", "--threshold", "context_recall=0"]
    data = write(tmp_path / "base.jsonl", rows())
    assert run("evaluate", data, *gated).exit_code == 0
    calls = hash_judge.usage.judge_calls
    decided, results = decide(tmp_path, rows(invented=True), *gated)
    assert decided.exit_code == 0, decided.output
    assert hash_judge.usage.judge_calls == calls  # nothing asked of the judge
    until = results["run"]["until_decided"]
    assert until["samples_scored"] == 0 and until["verdicts"] == {"context_recall": NO_CHANGE}
    said = words(decided.stdout)
    assert "Decided without scoring a sample" in said
    assert f"context_recall no change {NOT_TESTED}" in said
    assert f"with 0 of {N_SAMPLES} samples scored" in said  # kept, stopped by design
    completed = run("evaluate", tmp_path / "new.jsonl", *gated)
    assert completed.exit_code == 0, completed.output
    assert "INCOMPLETE" not in run("runs", "list").stdout


def test_settings_one_run_did_not_record_are_not_scored_alike() -> None:
    """What `diff` passes over as unknown (an older run's record) is not the same scoring."""
    base: dict[str, Any] = {
        "judge": {"name": "j", "sha256": "1" * 64},
        "prompt_version": "rag-5",
        "metric_settings": {"context_recall": {}},
    }
    newer = {**base, "judge": {**base["judge"], "settings": {"n_batch": 512}}}
    assert comparability_warnings(base, newer, ["context_recall"], True) == []
    assert scored_alike(base, dict(base), "context_recall")
    assert not scored_alike(base, newer, "context_recall")
    assert not scored_alike({**base, "metric_settings": {}}, base, "context_recall")
    assert not scored_alike(base, {**base, "prompt_version": "rag-4"}, "context_recall")


def test_the_rubric_reads_the_contexts_beyond_its_needs(tmp_path: Path) -> None:
    """The rubric's judge is shown the contexts: a changed chunk may move it, although its
    `needs` are the question and the answer alone."""
    gated = ["-m", "rubric", "--threshold", "rubric=0"]
    base = tmp_path / "base.json"
    data = write(tmp_path / "base.jsonl", rows())
    assert run("evaluate", data, *gated, "-o", base).exit_code == 0
    new = rows()
    new[5]["contexts"] = [*new[5]["contexts"], "Support calls are free on every plan."]
    _, results = decide(tmp_path, new, *gated, base=base)
    assert results["run"]["until_decided"]["not_tested"] == {}
    same, _ = decide(tmp_path, rows(), *gated, "--no-resume", base=base)
    assert "rubric no change (its inputs are the same" in words(same.stdout)
