"""The Python API, localeval.evaluate/diff/report, with the test doubles: every kind of data
it takes, every method of its result, its errors, and the models loaded once per process."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from fakes import FakeEmbedder, ScriptedJudge
from standins import StandIns, models_toml
from test_cli import QUESTION, ROW

import localeval
from localeval.cli import main
from localeval.database import Location
from localeval.errors import DatasetError, UsageError
from localeval.evaluation.sources import load_results
from localeval.history.store import RunStore
from localeval.metrics import Tools
from localeval.results.refs import RunRef
from localeval.testing import assert_rag_quality

ROOT = Path(__file__).resolve().parent.parent
RAGAS_ROW = {
    "user_input": QUESTION,
    "retrieved_contexts": ["The tower was finished in 1889."],
    "response": "It was finished in 1889.",
    "reference": "In 1889.",
}


def faithful(count: int = 1) -> Tools:
    """Test doubles for faithfulness alone: each sample's one statement, supported."""
    return Tools(judge=ScriptedJudge([0.9] * count), embedder=FakeEmbedder())


def stored_runs(db: Location) -> list[str]:
    store = RunStore.open(db)
    try:
        return [run.id for run in store.list_runs()]
    finally:
        store.close()


def test_a_file_is_scored_into_the_history_as_the_command_line_does(
    stand_ins: StandIns, tmp_path: Path, db: Location
) -> None:
    stand_ins.use(ScriptedJudge([0.95, 0.9, 0.05, 0.97]), FakeEmbedder())
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    run = localeval.evaluate(data, progress=False)
    assert run.passed and run.db == db
    assert [g.metric for g in run.gates] == [
        "context_precision",
        "faithfulness",
        "context_recall",
        "answer_relevancy",
    ]
    summary = run.summary["faithfulness"]
    assert (summary["mean"], summary["n"], summary["n_undefined"]) == (0.95, 1, 0)
    assert "ci95" in summary
    assert [s["sample_id"] for s in run.samples] == ["q1"]
    # results.json exactly, as the history gives it back (`runs show -o`, `report`)
    assert stored_runs(db) == [run.run_id]
    assert run.to_dict() == load_results(RunRef(run.run_id), db)
    assert run.to_dict()["run"]["dataset"] == str(data)
    assert repr(run) == (
        f"<Evaluation {run.run_id}: 1 samples, context_precision, faithfulness, "
        "context_recall, answer_relevancy; all gates passed>"
    )


def test_ragas_rows_in_a_list(tmp_path: Path) -> None:
    run = localeval.evaluate(
        [RAGAS_ROW], ["faithfulness"], tools=faithful(), db=tmp_path / "h.db", progress=False
    )
    sample = run.samples[0]
    assert sample["answer"] == "It was finished in 1889."
    assert sample["reference_answer"] == "In 1889."
    assert sample["scores"] == {"faithfulness": 0.9}
    assert run.to_dict()["run"]["dataset"] == "<samples>"


def test_a_dataframe_with_arrays_and_missing_cells(tmp_path: Path) -> None:
    """As pandas reads a parquet file: contexts as numpy arrays, a missing cell as NaN."""
    frame = pd.DataFrame(
        {
            "question": [QUESTION, "Who built it?"],
            "contexts": [np.array(["The tower was finished in 1889."]), np.array(["Eiffel."])],
            "answer": ["It was finished in 1889.", "Eiffel built it."],
            "reference": ["In 1889.", np.nan],
        }
    )
    run = localeval.evaluate(
        frame, ["faithfulness"], tools=faithful(2), db=tmp_path / "h.db", progress=False
    )
    first, second = run.samples
    assert first["contexts"] == ["The tower was finished in 1889."]
    assert second["reference_answer"] is None
    # rows without an id are named as a file's are
    assert first["sample_id"] != second["sample_id"]
    assert run.to_dict()["run"]["dataset"] == "<DataFrame>"


def test_a_hugging_face_dataset(tmp_path: Path) -> None:
    dataset = datasets.Dataset.from_list([RAGAS_ROW | {"sample_id": "d1"}])
    run = localeval.evaluate(
        dataset, ["faithfulness"], tools=faithful(), db=tmp_path / "h.db", progress=False
    )
    assert [s["sample_id"] for s in run.samples] == ["d1"]
    assert run.to_dict()["run"]["dataset"] == "<Dataset>"
    with pytest.raises(UsageError, match=r"a DatasetDict of splits \(test\): give one"):
        localeval.evaluate(datasets.DatasetDict(test=dataset), tools=faithful())


def test_to_pandas_and_the_evidence_table(tmp_path: Path) -> None:
    rows = [
        ROW,
        {**ROW, "sample_id": "q2", "answer": None},  # faithfulness undefined: no answer
    ]
    run = localeval.evaluate(
        rows, ["faithfulness"], tools=faithful(), db=tmp_path / "h.db", progress=False
    )
    frame = run.to_pandas()
    assert list(frame.index) == ["q1", "q2"]
    assert list(frame.columns) == ["category", "question", "answer", "faithfulness"]
    assert frame.loc["q1", "faithfulness"] == 0.9
    assert math.isnan(frame.loc["q2", "faithfulness"])
    evidence = run.evidence()
    assert list(evidence.columns) == ["sample_id", "metric", "score", "why", "details"]
    undefined = evidence[evidence.sample_id == "q2"].iloc[0]
    assert undefined.metric == "faithfulness" and math.isnan(undefined.score)
    assert undefined.why.startswith("undefined: ")


def test_no_history_with_db_none(tmp_path: Path, db: Location) -> None:
    run = localeval.evaluate([ROW], ["faithfulness"], tools=faithful(), db=None, progress=False)
    assert run.db is None and run.passed
    assert not Path(str(db)).exists() or stored_runs(db) == []


def test_models_load_once_per_process(
    stand_ins: StandIns, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    judge = stand_ins.use(ScriptedJudge([0.9, 0.4]), FakeEmbedder())
    loads: list[str] = []
    load = stand_ins.judge.load

    def counted(name: str, settings: Any) -> Any:
        loads.append(name)
        return load(name, settings)

    monkeypatch.setattr(stand_ins.judge, "load", counted)
    first = localeval.evaluate([ROW], ["faithfulness"], use_cache=False, progress=False)
    second = localeval.evaluate(
        [{**ROW, "answer": "Built in 1890."}], ["faithfulness"], use_cache=False, progress=False
    )
    assert len(loads) == 1
    assert first.summary["faithfulness"]["mean"] == 0.9
    assert second.summary["faithfulness"]["mean"] == 0.4
    judge.assert_done()


def test_diff_and_report(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    rows = [ROW | {"sample_id": f"q{n}"} for n in range(3)]
    base = localeval.evaluate(
        rows, ["faithfulness"], tools=faithful(3), db=db, resume=False, progress=False
    )
    worse = Tools(judge=ScriptedJudge([0.2] * 3), embedder=FakeEmbedder())
    new = localeval.evaluate(
        rows, ["faithfulness"], tools=worse, db=db, resume=False, progress=False
    )
    comparison = localeval.diff(base, new)
    change = comparison.metrics[0]
    assert change.metric == "faithfulness"
    assert (change.base_mean, change.new_mean) == pytest.approx((0.9, 0.2))
    assert [c.metric for c in comparison.regressions(0.05)] == ["faithfulness"]
    by_ref = localeval.diff("latest~1", "latest", db=db)
    assert by_ref.as_dict()["metrics"] == comparison.as_dict()["metrics"]
    markdown = localeval.report(new, format="md")
    assert "faithfulness" in markdown and "0.200" in markdown
    assert localeval.report("latest", "json", db=db) == localeval.report(new.to_dict(), "json")
    assert localeval.report(new).lstrip().startswith("<!DOCTYPE html>")
    with pytest.raises(UsageError, match="unknown report format 'pdf'"):
        localeval.report(new, "pdf")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: localeval.evaluate(ROW), UsageError, "not a single sample"),
        (lambda: localeval.evaluate(42), UsageError, "not int"),
        (lambda: localeval.evaluate([]), DatasetError, "<samples>: holds no samples"),
        (
            lambda: localeval.evaluate([{"answer": "x"}]),
            DatasetError,
            "<samples>, line 1, field 'question': missing",
        ),
        (lambda: localeval.evaluate("no-such.jsonl"), DatasetError, "no-such.jsonl"),
        (lambda: localeval.evaluate([ROW], ["faithfulnes"]), UsageError, "unknown metric"),
        (
            lambda: localeval.evaluate([ROW], ["faithfulness"], thresholds={"faithfulness": 2}),
            UsageError,
            "thresholds: 'faithfulness' must be a number between 0 and 1",
        ),
        (
            lambda: localeval.evaluate([ROW], ["faithfulness"], gate_on="people"),
            UsageError,
            "gate_on people: one of judge, corrected, auto",
        ),
        (
            lambda: localeval.evaluate([ROW], ["faithfulness"], judge="nobody"),
            UsageError,
            "nobody",
        ),
        (
            lambda: localeval.evaluate([ROW], ["rubric"], options={"criteria": "c.yaml"}),
            UsageError,
            r"options: unknown option 'criteria' \(known: .*rubric_criteria",
        ),
        (
            lambda: localeval.evaluate([ROW], ["rubric"], options={"rubric_criteria": "c.yaml"}),
            UsageError,
            "c.yaml: criteria file not found",
        ),
    ],
)
def test_bad_input_raises_and_prints_nothing(
    call: Any, error: type[Exception], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(error, match=message):
        call()
    assert capsys.readouterr() == ("", "")


def test_invalid_rows_skipped_with_a_warning(tmp_path: Path) -> None:
    rows = [ROW, {"sample_id": "bad", "answer": "no question"}]
    with pytest.warns(localeval.LocalevalWarning, match="Skipped: <samples>, line 2"):
        run = localeval.evaluate(
            rows, ["faithfulness"], tools=faithful(), skip_invalid=True, db=None, progress=False
        )
    assert [s["sample_id"] for s in run.samples] == ["q1"]
    assert run.to_dict()["run"]["skipped_rows"][0]["field"] == "question"
    with pytest.warns(localeval.LocalevalWarning, match="unknown field 'sorce'"):
        localeval.evaluate(
            [ROW | {"sorce": "x"}], ["faithfulness"], tools=faithful(), db=None, progress=False
        )


def test_progress_is_tqdms_bar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    localeval.evaluate([ROW], ["faithfulness"], tools=faithful(), db=None)
    shown = capsys.readouterr()
    assert shown.out == "" and "Evaluating: 100%" in shown.err and "1/1" in shown.err
    localeval.evaluate([ROW], ["faithfulness"], tools=faithful(), db=None, progress=False)
    assert capsys.readouterr() == ("", "")


def test_import_stays_light() -> None:
    """`import localeval` and `localeval --help` load none of the API's modules (only its
    index of names, localeval.api, and the options' defaults), nor torch or pandas."""
    code = (
        "import sys, localeval\n"
        "from localeval.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = {'torch', 'pandas', 'llama_cpp'} & set(sys.modules)\n"
        "light = {'localeval.api.defaults'}  # the options' defaults, which --help shows\n"
        "heavy |= {m for m in sys.modules if m.startswith('localeval.api.')} - light\n"
        "print(sorted(heavy))\n"
        "localeval.evaluate\n"
        "print('localeval.api.evaluating' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.splitlines()[-2:] == ["[]", "True"]


def test_the_judges_own_gates_as_on_the_command_line(
    stand_ins: StandIns, tmp_path: Path, db: Location
) -> None:
    """One plan of the gates (results.gates.plan_gates) for the command, the API and the
    pytest gate: the judge's own threshold, a given one over it."""
    models = tmp_path / "models.toml"
    models.write_text(models_toml("faithfulness = 0.15\ncontext_recall = 0.3"))
    stand_ins.use(ScriptedJudge([0.9] * 6), FakeEmbedder())
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    metrics = ["faithfulness", "context_recall"]
    run = localeval.evaluate(
        data, metrics, models=models, thresholds={"context_recall": 0.5}, progress=False
    )
    expected = {"faithfulness": 0.15, "context_recall": 0.5}
    assert {g.metric: g.threshold for g in run.gates} == expected
    command = ["evaluate", str(data), "--models", str(models), "-m", "faithfulness"]
    command += ["-m", "context_recall", "--threshold", "context_recall=0.5", "--no-resume"]
    assert CliRunner().invoke(main, command).exit_code == 0
    assert {g["metric"]: g["threshold"] for g in load_results(RunRef("latest"))["gates"]} == (
        expected
    )
    quality = assert_rag_quality(data, {"context_recall": 0.5}, metrics, models=models)
    assert {g.metric: g.threshold for g in quality.gates} == expected


def test_a_run_stopped_part_way_is_continued_by_the_same_call(tmp_path: Path) -> None:
    """As after Ctrl-C in a notebook cell: the samples scored are kept, and calling again
    scores only the rest, into the same run."""
    db = tmp_path / "h.db"
    rows = [ROW | {"sample_id": "a"}, ROW | {"sample_id": "b"}]
    with (
        pytest.warns(localeval.LocalevalWarning, match=r"is saved with 1 of 2 samples scored"),
        pytest.raises(AssertionError, match="no canned answer left"),
    ):
        localeval.evaluate(rows, ["faithfulness"], tools=faithful(1), db=db, progress=False)
    (stopped,) = stored_runs(db)
    with pytest.warns(localeval.LocalevalWarning, match=f"continuing run {stopped}: 1 of 2"):
        run = localeval.evaluate(rows, ["faithfulness"], tools=faithful(1), db=db, progress=False)
    assert run.run_id == stopped and [s["sample_id"] for s in run.samples] == ["a", "b"]
    assert [s.sample.sample_id for s in run.scored.samples] == ["b"]
