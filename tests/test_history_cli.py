"""The run history from the command line: evaluate keeps every run, `runs` lists and shows
them, `diff` compares two, the regression gate, and resuming an interrupted run; each on
an SQLite file and on a PostgreSQL database."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from fakes import UNSUPPORTED, FakeEmbedder, HashJudge, InterruptingJudge
from standins import StandIns, models_toml

from localeval.cli import main
from localeval.database import Location
from localeval.errors import UsageError
from localeval.evaluation.requests import EvaluationEvents, EvaluationRequest
from localeval.evaluation.scoring import ScoringRun
from localeval.judge import Prompt
from localeval.results.model import SampleResult
from localeval.stats import bootstrap_ci

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"
pytestmark = pytest.mark.both_stores

PASS_ALL = [f"--threshold={m}=0" for m in ("faithfulness", "answer_relevancy")] + [
    f"--threshold={m}=0" for m in ("context_recall", "context_precision")
]


@pytest.fixture(autouse=True)
def models_without_thresholds(
    stand_ins: StandIns, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Gates at the default gates, which the hash judge's demo scores fail: these tests need
    failing gates, whatever thresholds the project's models.toml gives its default judge."""
    models = tmp_path_factory.mktemp("models") / "models.toml"
    models.write_text(models_toml())
    stand_ins.models = models
    stand_ins.use()


def use_judge(stand_ins: StandIns, judge: HashJudge | None = None) -> None:
    """The hash judge (or `judge`) and the fake embedder, selected by name."""
    stand_ins.use(judge or HashJudge(), FakeEmbedder())


def run(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data), "utf-8")
    return path


def scores(results: Path, metric: str) -> dict[str, float | None]:
    data = json.loads(results.read_text(encoding="utf-8"))
    return {s["sample_id"]: s["scores"][metric] for s in data["samples"]}


def test_changed_answer_shows_in_diff_with_interval_and_sample(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    use_judge(stand_ins)
    data = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, data)
    assert run("evaluate", data, "-o", tmp_path / "r1.json", *PASS_ALL).exit_code == 0
    changed = rows(data)
    assert changed[0]["sample_id"] == "billing-1"
    changed[0]["answer"] += f" It also includes {UNSUPPORTED} free support calls."
    write_rows(data, changed)
    assert run("evaluate", data, "-o", tmp_path / "r2.json", *PASS_ALL).exit_code == 0

    result = run("diff", "latest~1", "latest")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    before = scores(tmp_path / "r1.json", "faithfulness")
    after = scores(tmp_path / "r2.json", "faithfulness")
    differences = np.array([after[k] - before[k] for k in before])  # type: ignore[operator]
    low, high = bootstrap_ci(differences)  # type: ignore[misc]
    row = next(line for line in lines if line.startswith("faithfulness "))
    assert row.split() == [
        "faithfulness",
        f"{np.mean(list(before.values())):.3f}",
        f"{np.mean(list(after.values())):.3f}",
        f"{differences.mean():+.3f}",
        f"[{low:+.3f},",
        f"{high:+.3f}]",
        "8",
        *("no detectable change" if low <= 0 <= high else "worse").split(),
    ]
    assert "Samples that changed most:" in lines
    mover = lines.index(
        f"  faithfulness  billing-1: {before['billing-1']:.3f} -> {after['billing-1']:.3f} "
        f"({after['billing-1'] - before['billing-1']:+.3f})"  # type: ignore[operator]
    )
    assert lines[mover + 1] == (
        f'      new unsupported statement (0.01): "It also includes {UNSUPPORTED} free support '
        'calls."'
    )
    # the data file changed between the runs, and the diff says so
    assert lines[2].startswith("Warning: the runs used different datasets (sha256 ")


def test_runs_list_and_show(stand_ins: StandIns, tmp_path: Path) -> None:
    assert run("runs", "list").stdout.startswith("No runs yet: ")
    use_judge(stand_ins)
    out = tmp_path / "r.json"
    assert run("evaluate", DEMO, "-m", "faithfulness", "-o", out).exit_code == 1
    listed = run("runs", "list").stdout.splitlines()
    assert listed[0].split() == ["id", "created", "status", "samples", "judge", "dataset"]
    run_id = json.loads(out.read_text())["run"]["id"]
    assert listed[1].split()[0] == run_id and listed[1].split()[2:5] == [
        "complete",
        "8/8",
        "hash-judge",
    ]
    again = tmp_path / "again.json"
    shown = run("runs", "show", run_id[:-3], "-o", again)
    assert shown.exit_code == 0, shown.output
    assert f"run:            {run_id}" in shown.stdout
    assert "status:         complete, finished " in shown.stdout
    assert "metrics:        faithfulness" in shown.stdout
    assert "FAIL  faithfulness = " in shown.stdout
    # the stored run gives back the very results.json that evaluate wrote
    assert again.read_text() == out.read_text()


def comparable(results: Path) -> dict[str, Any]:
    data = json.loads(results.read_text())
    for key in ("id", "created"):
        del data["run"][key]
    del data["run"]["usage"]["seconds"]
    return data


def test_interrupted_run_resumes_to_the_same_results(stand_ins: StandIns, tmp_path: Path) -> None:
    use_judge(stand_ins)
    whole = tmp_path / "whole.json"
    assert run("evaluate", DEMO, "--db", tmp_path / "other.db", "-o", whole).exit_code == 1

    use_judge(stand_ins, InterruptingJudge(calls=12))
    out = tmp_path / "resumed.json"
    stopped = run("evaluate", DEMO, "-o", out)
    assert stopped.exit_code == 130
    (run_id,) = [line.split()[0] for line in run("runs", "list").stdout.splitlines()[1:]]
    done = int(stopped.stderr.split(" samples scored")[0].split()[-3])
    assert 0 < done < 8
    assert stopped.stderr.endswith(
        f"Run {run_id} is saved with {done} of 8 samples scored; re-run the same command to "
        "continue it.\nInterrupted.\n"
    )
    assert "INCOMPLETE" in run("runs", "list").stdout
    assert run("diff", run_id, run_id).stderr == (
        f"Error: run {run_id} is incomplete ({done} of 8 samples); finish it first (re-run its "
        "command) to compare it\n"
    )

    use_judge(stand_ins)
    resumed = run("evaluate", DEMO, "-o", out)
    assert resumed.exit_code == 1, resumed.output
    assert (
        f"Resuming run {run_id}: {done} of 8 samples were scored before it stopped. "
        "(--no-resume starts a new run.)" in resumed.stderr
    )
    assert comparable(out) == comparable(whole)
    assert json.loads(out.read_text())["run"]["id"] == run_id


def test_resume_options(stand_ins: StandIns, tmp_path: Path) -> None:
    use_judge(stand_ins, InterruptingJudge(calls=5))
    assert run("evaluate", DEMO, "-m", "faithfulness").exit_code == 130
    (first,) = [line.split()[0] for line in run("runs", "list").stdout.splitlines()[1:]]

    use_judge(stand_ins)
    contradiction = run("evaluate", DEMO, "--resume", "--no-resume")
    assert (
        contradiction.stderr == "Error: --resume and --no-resume contradict each other; give one\n"
    )
    other_metrics = run("evaluate", DEMO, "--resume", first)
    assert other_metrics.exit_code == 2
    assert other_metrics.stderr == (
        f"Error: run {first} computed faithfulness; this command asks for context_precision, "
        "faithfulness, context_recall, answer_relevancy\n"
    )
    fresh = run("evaluate", DEMO, "-m", "faithfulness", "--no-resume")
    assert fresh.exit_code == 1 and "Resuming" not in fresh.stderr
    statuses = [line.split()[2] for line in run("runs", "list").stdout.splitlines()[1:]]
    assert statuses == ["complete", "INCOMPLETE"]
    explicit = run("evaluate", DEMO, "-m", "faithfulness", "--resume", first)
    assert explicit.exit_code == 1 and f"Resuming run {first}: " in explicit.stderr
    done = run("evaluate", DEMO, "-m", "faithfulness", "--resume", first)
    assert done.stderr == f"Error: run {first} is already complete; there is nothing to resume\n"
    nothing = run("evaluate", DEMO, "-m", "faithfulness", "--resume")
    assert nothing.stderr.endswith(
        "Error: no interrupted run of this evaluation (same data, models, prompts and metrics) "
        "to resume; run without --resume to start one\n"
    )


def test_regression_gate_fails_on_a_real_drop_and_passes_on_a_rerun(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    use_judge(stand_ins)
    base = [
        {
            "sample_id": f"q{i}",
            "question": f"What colour is item {i}?",
            "contexts": [f"Item {i} is blue.", f"Item {i} weighs {i} kg."],
            "answer": f"Item {i} is blue. It weighs {i} kg.",
        }
        for i in range(24)
    ]
    data = write_rows(tmp_path / "d.jsonl", base)
    gate = ["-m", "faithfulness", "--threshold", "faithfulness=0"]
    assert run("evaluate", data, *gate).exit_code == 0

    rerun = run("evaluate", data, *gate, "--baseline", "latest")
    assert rerun.exit_code == 0, rerun.output
    assert rerun.stdout.endswith(
        "Regression gate (fails on a drop of more than 0.02 whose 95% CI excludes 0):\n"
        "  PASS  no metric is worse beyond the tolerance\n"
    )

    worse = [
        {**row, "answer": f"Item {i} is {UNSUPPORTED} red."} if i % 2 else row
        for i, row in enumerate(base)
    ]
    write_rows(data, worse)
    dropped = run("evaluate", data, *gate, "--baseline", "latest", "-o", tmp_path / "new.json")
    assert dropped.exit_code == 1, dropped.output
    failure = dropped.stdout.splitlines()[-1]
    assert failure.startswith("  FAIL  faithfulness dropped by ")
    assert "95% CI of the change [-" in failure
    # the same verdict from `diff`, and none with a tolerance larger than the drop
    assert run("diff", "latest~1", "latest", "--fail-on-regression").exit_code == 1
    assert run("diff", "latest~1", "latest").exit_code == 0
    lenient = run("diff", "latest~1", "latest", "--fail-on-regression", "--max-drop", "0.9")
    assert lenient.exit_code == 0
    # results.json files work as well as run ids, without the database
    by_file = run("diff", "latest~1", tmp_path / "new.json", "--fail-on-regression")
    assert by_file.exit_code == 1
    as_json = tmp_path / "diff.json"
    assert run("diff", "latest~1", "latest", "-o", as_json).exit_code == 0
    (faithfulness,) = json.loads(as_json.read_text())["metrics"]
    assert faithfulness["verdict"] == "worse" and faithfulness["n_paired"] == 24
    assert run("diff", "latest", "latest", "--max-drop", "2").stderr == (
        "Error: --max-drop 2: must be between 0 and 1\n"
    )


def test_diff_warns_when_the_judge_differs(stand_ins: StandIns) -> None:
    use_judge(stand_ins)
    assert run("evaluate", DEMO, "-m", "faithfulness").exit_code == 1

    class OtherJudge(HashJudge):
        name = "other-judge"
        sha256 = "2" * 64

    use_judge(stand_ins, OtherJudge())
    assert run("evaluate", DEMO, "-m", "faithfulness").exit_code == 1
    warning = run("diff", "latest~1", "latest").stdout.splitlines()[2]
    assert warning == (
        "Warning: the runs used different judges (hash-judge (111111111111) vs other-judge "
        "(222222222222)): their scores are not comparable."
    )


def test_unusable_database_fails_before_models(
    stand_ins: StandIns, tmp_path: Path, db: Location
) -> None:
    stand_ins.forbid()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    result = run("evaluate", DEMO, "--db", garbage)
    assert result.exit_code == 2
    assert result.stderr == f"Error: database {garbage}: file is not a database\n"
    missing = tmp_path / "none.db"
    assert run("diff", "latest~1", "latest", "--db", missing).stderr == (
        f"Error: no run history at {missing}: `localeval evaluate DATA` creates it (or give "
        "--db PATH / set LOCALEVAL_DB)\n"
    )
    assert run("evaluate", DEMO, "--baseline", "latest").stderr == (
        f"Error: --baseline latest: there is no run history at {db} (give --db PATH or set "
        "LOCALEVAL_DB)\n"
    )


def test_report_of_a_stored_run_equals_the_report_of_its_results_file(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    use_judge(stand_ins)
    data = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, data)
    assert run("evaluate", data, "-o", tmp_path / "r.json", *PASS_ALL).exit_code == 0
    from_store = run("report", "latest", "-f", "md")
    from_file = run("report", tmp_path / "r.json", "-f", "md")
    assert from_store.exit_code == 0, from_store.output
    assert from_store.stdout == from_file.stdout
    assert "billing-1" in from_store.stdout or "zh-" in from_store.stdout
    missing = run("report", "latest~5")
    assert missing.exit_code == 2
    assert missing.stderr.startswith("Error: ")


class RewritingEvents(EvaluationEvents):
    """Rewrites the data file in place after `after` samples are scored (and then, with
    `stop`, stops the run as Ctrl-C would)."""

    def __init__(self, data: Path, text: str, after: int, stop: bool = False):
        self.data, self.text, self.after, self.stop = data, text, after, stop
        self.count = 0

    def scored(self, result: SampleResult) -> None:
        self.count += 1
        if self.count == self.after:
            self.data.write_text(self.text, encoding="utf-8")
            if self.stop:
                raise KeyboardInterrupt


def bleu_rows(word: str, count: int = 300) -> str:
    return "".join(
        json.dumps(
            {"sample_id": f"s{i}", "question": f"Q{i}?", "answer": f"It is {word} {i}."}
            | {"reference_answer": "It is green 1."}
        )
        + "\n"
        for i in range(count)
    )


@pytest.mark.parametrize("stop", [False, True])
def test_a_run_whose_data_changed_is_never_completed(tmp_path: Path, stop: bool) -> None:
    """The data file rewritten in place part-way through a run, then restored: the same
    command again must not resume the run (its samples hold the other content) into a
    complete one; it starts a new run, and --resume of the marked run is refused."""
    data = tmp_path / "d.jsonl"
    original = bleu_rows("green")
    data.write_text(original, encoding="utf-8")
    events = RewritingEvents(data, bleu_rows("blue"), after=126, stop=stop)
    evaluation = ScoringRun(EvaluationRequest(data, ["bleu"]), events)
    with pytest.raises(KeyboardInterrupt if stop else UsageError) as stopped, evaluation:
        evaluation.run()
    (first,) = [line.split()[0] for line in run("runs", "list").stdout.splitlines()[1:]]
    if not stop:
        assert str(stopped.value) == (
            f"{data} changed while it was being evaluated; run {first} is not complete and is "
            "never continued: evaluate it again to start a new run"
        )
    data.write_text(original, encoding="utf-8")

    again = run("evaluate", data, "-m", "bleu", "--no-progress")
    assert again.exit_code == 0, again.output
    assert "Resuming" not in again.stderr
    listed = [line.split()[:4] for line in run("runs", "list").stdout.splitlines()[1:]]
    assert listed[1] == [first, listed[1][1], "INVALID", listed[1][3]]
    assert listed[0][2:] == ["complete", "300/300"]
    shown = run("runs", "show", first).stdout.splitlines()
    assert shown[1].startswith(
        f"status:         INVALID: {data} changed while it was being evaluated; "
    )
    refused = run("evaluate", data, "-m", "bleu", "--resume", first)
    assert (refused.exit_code, refused.stderr) == (
        2,
        f"Error: run {first} can never be resumed: {data} changed while it was being "
        "evaluated; evaluate without --resume to start a new run\n",
    )


class RewritingJudge(InterruptingJudge):
    """Rewrites the data file in place, then Ctrl-C, after a number of judge calls."""

    def __init__(self, calls: int, data: Path):
        super().__init__(calls)
        self.data = data

    def yes_probability(self, prompt: Prompt) -> float:
        if self.calls_left == 0:
            self.data.write_text(self.data.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        return super().yes_probability(prompt)


def test_a_run_stopped_after_its_data_changed_says_it_is_never_continued(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    data = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, data)
    use_judge(stand_ins, RewritingJudge(calls=5, data=data))
    stopped = run("evaluate", data, "-m", "faithfulness")
    assert stopped.exit_code == 130
    (run_id,) = [line.split()[0] for line in run("runs", "list").stdout.splitlines()[1:]]
    assert stopped.stderr.endswith(
        f"{data} changed while it was being evaluated: run {run_id} is never continued; "
        "re-run the same command to start a new run.\nInterrupted.\n"
    )
    shutil.copy(DEMO, data)
    use_judge(stand_ins)
    again = run("evaluate", data, "-m", "faithfulness")
    assert again.exit_code == 1 and "Resuming" not in again.stderr
