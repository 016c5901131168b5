"""A run is read once into a RunView (localeval.results.view), whichever it comes from (a
results.json file, a results dict, the run history), and every report, `diff`, `runs show`,
`runs merge` and `evaluate`'s summary are drawn from that view. The judge is the
deterministic fake (backend "fake"), so every path scores the same."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import report_data
from click.testing import CliRunner, Result
from review_runs import demo_copy

from localeval.cli import main
from localeval.evaluation.sources import stored_run_scores, stored_view
from localeval.history.store import open_history
from localeval.reports.render import render_report
from localeval.results.view import read_run
from localeval.stats import MetricSummary

FAKE = '[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n'
METRICS = [
    "-m",
    "faithfulness",
    "-m",
    "answer_correctness",
    "--answer-correctness-diagnose",
    "-m",
    "rouge_l",
]
EVALUATE = ["evaluate", "--no-progress", *METRICS]


def test_a_results_dict_is_read_into_typed_values() -> None:
    view = read_run(report_data.results(), "latest")
    assert view.label == "latest" and view.run_id == "20240601T120000-abcdef"
    assert view.metrics == [
        "context_precision",
        "faithfulness",
        "context_recall",
        "answer_relevancy",
    ]
    assert view.n_samples == 3 and view.dataset == "data.jsonl" and view.prompt_version == "rag-1"
    assert view.thresholds == {
        "context_precision": 0.65,
        "faithfulness": 0.8,
        "context_recall": 0.7,
        "answer_relevancy": 0.75,
    }
    assert [g.metric for g in view.failed_gates] == ["faithfulness"]
    assert view.summaries["context_recall"] == MetricSummary(0.85, 2, 1, (0.75, 0.95))
    assert view.usage is not None and (view.usage.judge_calls, view.usage.seconds) == (30, 12.5)
    # the file has no summary per category: the samples' scores are summarised
    assert list(view.by_category) == ["history", "travel"]
    assert view.by_category["history"]["faithfulness"].mean == pytest.approx(0.45)
    # worst first: t2's faithfulness is furthest below its gate
    assert [(w.sample["sample_id"], w.metric) for w in view.worst(2)] == [
        ("t2", "faithfulness"),
        ("t1", "faithfulness"),
    ]
    assert view.details("t3", "context_recall") == {"undefined_reason": "no reference_answer"}
    assert view.details("t3", "nothing") is None


def test_a_summary_row_holds_the_gate_and_the_baseline() -> None:
    view = read_run(report_data.results())
    rows = {row.metric: row for row in view.summary_rows(read_run(report_data.baseline()))}
    faith = rows["faithfulness"]
    assert (faith.mean, faith.threshold, faith.passed, faith.below) == (0.6, 0.8, False, True)
    assert faith.baseline == pytest.approx(0.65) and faith.delta == pytest.approx(-0.05)
    assert rows["answer_relevancy"].passed is True and not rows["answer_relevancy"].below
    assert [row.metric for row in view.summary_rows()] == view.metrics


def test_odd_values_of_a_hand_edited_file_read_as_missing() -> None:
    data = report_data.results()
    data["samples"][0]["scores"]["faithfulness"] = "high"
    data["samples"][1]["details"] = None
    data["summary"]["faithfulness"] = {"mean": float("nan"), "ci95": [0.1, "x"]}
    data["summary"]["context_recall"] = "not a summary"
    data["gates"][0]["threshold"] = "high"
    data["run"]["usage"] = None
    data["samples"].append("not a sample")
    view = read_run(data)
    assert view.summaries["faithfulness"] == MetricSummary(None, 0, 0, None)
    assert "context_recall" not in view.summaries
    assert "context_precision" not in view.thresholds  # its gate had no threshold
    assert view.usage is None and view.n_samples == 3
    assert math.isnan(view.columns.scores["faithfulness"][0])
    row = next(r for r in view.summary_rows() if r.metric == "context_recall")
    assert row.summary is None and row.mean is None


@pytest.fixture
def evaluated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Result, Path]:
    """A run of the fake judge on the demo (copied to tmp_path), its evaluate output and its
    results.json."""
    models = tmp_path / "fake.toml"
    models.write_text(FAKE, encoding="utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    data = demo_copy(tmp_path)
    out = tmp_path / "results.json"
    command = [*EVALUATE, str(data)]
    result = CliRunner().invoke(main, [*command, "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    return result, out


@pytest.mark.both_stores
def test_the_history_and_the_results_file_give_the_same_view(
    evaluated: tuple[Result, Path],
) -> None:
    _, out = evaluated
    from_file = read_run(json.loads(out.read_text(encoding="utf-8")))
    store = open_history(None)
    try:
        stored = stored_view(store, store.resolve("latest"))
        for_diff = stored_run_scores(store, store.resolve("latest"), "latest")
        # what `diff` reads: the scores, and evidence asked for by sample
        assert for_diff.summaries == {} and for_diff.metrics == from_file.metrics
        assert for_diff.details("billing-2", "faithfulness") == from_file.details(
            "billing-2", "faithfulness"
        )
    finally:
        store.close()
    for view in (from_file, stored):
        assert "answer_correctness.precision" in view.summaries  # with the sub-scores
    assert stored.summaries == from_file.summaries
    assert stored.by_category == from_file.by_category
    assert stored.gates == from_file.gates and stored.thresholds == from_file.thresholds
    assert stored.diagnosis == from_file.diagnosis and stored.diagnosis is not None
    assert stored.metrics == from_file.metrics and stored.run == from_file.run
    assert stored.calibration == from_file.calibration


@pytest.mark.both_stores
def test_runs_show_and_merge_print_the_summary_evaluate_printed(
    evaluated: tuple[Result, Path], tmp_path: Path
) -> None:
    result, _ = evaluated
    printed = result.stdout.split("\nResults written to")[0]
    assert "Diagnosis (--answer-correctness-diagnose):" in printed
    assert "not calibrated" not in printed  # the corrected means say what to do instead
    shown = CliRunner().invoke(main, ["runs", "show", "latest"])
    assert shown.exit_code == 0 and printed in shown.stdout
    # the same evaluation in two shards, merged: the same summary but for the seconds taken
    command = [*EVALUATE, str(tmp_path / "demo.jsonl")]
    for k in (1, 2):
        shard = CliRunner().invoke(main, [*command, "--shard", f"{k}/2"])
        assert shard.exit_code in (0, 1), shard.output
    merged = CliRunner().invoke(main, ["runs", "merge", "latest~1", "latest"])
    assert merged.exit_code in (0, 1), merged.output
    assert printed.rsplit("\n\n", 1)[0] in merged.stdout


@pytest.mark.both_stores
def test_a_report_of_the_history_is_the_report_of_its_results_file(
    evaluated: tuple[Result, Path],
) -> None:
    _, out = evaluated
    data = json.loads(out.read_text(encoding="utf-8"))
    for report_format in ("html", "md", "junit"):
        shown = CliRunner().invoke(main, ["report", "latest", "-f", report_format])
        assert shown.exit_code == 0, shown.output
        assert shown.stdout == render_report(data, report_format)
