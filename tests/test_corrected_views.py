"""Where the mean corrected by labels is read: every report, the gates
(`evaluate --gate-on`), and `diff`'s paired change."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from corrected_runs import ENOUGH, METRICS, RUN_SIZE, labelled_run
from review_runs import demo_copies, evaluate, run_cli
from standins import StandIns

from localeval.labels.review_items import load_review_run
from localeval.labels.store import LabelStore
from localeval.prediction_powered import MIN_LABELLED


def test_every_report_shows_the_corrected_mean(stand_ins: StandIns, tmp_path: Path) -> None:
    labelled_run(stand_ins, tmp_path, ENOUGH)
    out = tmp_path / "results.json"
    shown = run_cli("runs", "show", "latest", "-o", out)
    assert "Corrected by people's labels" in shown.output
    entry = json.loads(out.read_text("utf-8"))["summary"]["faithfulness"]["corrected"]
    mean = f"{entry['mean']:.3f}"
    assert f"faithfulness: {mean} [" in shown.output
    for kind in ("html", "md", "junit"):
        page = tmp_path / f"report.{kind if kind != 'junit' else 'xml'}"
        result = run_cli("report", out, "--format", kind, "-o", page)
        assert result.exit_code == 0, result.output
        text = page.read_text("utf-8")
        assert mean in text, kind
        assert str(ENOUGH) in text and f"{entry['judge_mean']:.3f}" in text, kind
    html = (tmp_path / "report.html").read_text("utf-8")
    assert "not calibrated" not in html.split("Corrected by people")[0]
    assert "class='low'" not in html


def test_a_report_without_enough_labels_says_how_to_make_them(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    labelled_run(stand_ins, tmp_path, 3, n_samples=RUN_SIZE)
    out = tmp_path / "results.json"
    assert run_cli("runs", "show", "latest", "-o", out).exit_code == 0
    page = tmp_path / "report.html"
    assert run_cli("report", out, "--format", "html", "-o", page).exit_code == 0
    html = page.read_text("utf-8")
    assert f"label {MIN_LABELLED - 3} more samples" in html
    assert "localeval review" in html


def test_a_gate_reads_the_corrected_mean_when_there_are_enough_labels(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    from localeval.results.corrected import correct
    from localeval.results.gates import evaluate_gates
    from localeval.stats import summarize

    rng = np.random.default_rng(3)
    n_all = 2 * RUN_SIZE
    ids = [f"s{i}" for i in range(n_all)]
    judge = list(rng.uniform(0.7, 1.0, n_all))  # the judge reads high: mean about 0.85
    people = {s: float(rng.uniform(0.3, 0.7)) for s in ids[:RUN_SIZE]}  # people: about 0.5
    summaries = {"faithfulness": summarize(judge)}
    corrected = {"faithfulness": correct(judge, ids, people)}
    auto = evaluate_gates(summaries, {"faithfulness": 0.8}, corrected=corrected)[0]
    assert not auto.passed and auto.reads == "corrected"
    assert auto.value == pytest.approx(corrected["faithfulness"].estimate.mean)
    assert "corrected by people's labels, 95% CI" in auto.explanation()
    assert auto.as_dict()["interval_straddles"] is False
    judge_only = evaluate_gates(
        summaries, {"faithfulness": 0.8}, corrected=corrected, gate_on="judge"
    )
    assert judge_only[0].passed and judge_only[0].reads == "judge"
    few = {"faithfulness": correct(judge, ids, dict(list(people.items())[:4]))}
    fallback = evaluate_gates(summaries, {"faithfulness": 0.8}, corrected=few)[0]
    assert fallback.passed and fallback.reads == "judge"
    strict = evaluate_gates(summaries, {"faithfulness": 0.8}, corrected=few, gate_on="corrected")
    assert not strict[0].passed
    assert f"label {MIN_LABELLED - 4} more samples" in strict[0].title()


def test_evaluate_gate_on_is_checked_and_recorded(stand_ins: StandIns, tmp_path: Path) -> None:
    data = demo_copies(tmp_path, RUN_SIZE)
    evaluate(stand_ins, data, "-m", "faithfulness")
    strict = run_cli(
        "evaluate",
        data,
        "-m",
        "faithfulness",
        "--no-progress",
        "--gate-on",
        "corrected",
        "--threshold",
        "faithfulness=0.1",
    )
    assert strict.exit_code == 1, strict.output
    assert f"label {MIN_LABELLED} more samples" in " ".join(strict.output.split())
    bad = run_cli("evaluate", data, "--gate-on", "people")
    assert bad.exit_code == 2
    assert "people" in bad.output


def test_diff_gives_the_paired_corrected_change_or_says_it_is_the_judges(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    from localeval.results.diff import corrected_change

    labelled_run(stand_ins, tmp_path, ENOUGH, n_samples=RUN_SIZE)
    data = tmp_path / f"demo-{RUN_SIZE}.jsonl"
    evaluate(stand_ins, data, *METRICS, "--no-resume")  # the labels carry over to it
    result = run_cli("diff", "latest~1", "latest", "-o", tmp_path / "diff.json")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "Corrected by people's labels (paired" in said
    assert (
        "faithfulness: +0.000 [" in said and f"from {ENOUGH} samples labelled in both runs" in said
    )
    # fewer labels (the first runs' are of other samples than these): the judge's change
    labelled_run(stand_ins, tmp_path, 4, n_samples=RUN_SIZE - 1)
    evaluate(stand_ins, tmp_path / f"demo-{RUN_SIZE - 1}.jsonl", *METRICS, "--no-resume")
    few = " ".join(run_cli("diff", "latest~1", "latest").output.split())
    assert "These changes are the judge's" in few
    # the formula on differences: the judge's changes corrected by people's
    from localeval.results.diff import MetricChange

    ids = [f"s{i}" for i in range(RUN_SIZE + 10)]
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, len(ids))
    new = np.clip(base + 0.2, 0, 1)
    people_base = {s: 0.5 for s in ids[:RUN_SIZE]}
    people_new = {s: 0.4 for s in ids[:RUN_SIZE]}  # people see a drop where the judge sees a rise
    plain = MetricChange("faithfulness", 0.5, 0.7, len(ids), 0.2, (0.1, 0.3), "better")
    found = corrected_change(plain, (base, new), ids, (people_base, people_new)).corrected
    assert found is not None and found.mean == pytest.approx(-0.1, abs=1e-9)
    # people's changes are all -0.1: the interval is that point, up to float rounding
    assert found.ci95[0] - 1e-9 <= -0.1 <= found.ci95[1] + 1e-9


def test_every_report_says_a_gate_read_the_corrected_mean(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    labelled_run(stand_ins, tmp_path, ENOUGH, n_samples=RUN_SIZE)
    data = tmp_path / f"demo-{RUN_SIZE}.jsonl"
    out = tmp_path / "results.json"
    run_cli("evaluate", data, *METRICS, "--no-progress", "--no-resume", "-o", out)
    gate = next(
        g for g in json.loads(out.read_text("utf-8"))["gates"] if g["metric"] == "faithfulness"
    )
    assert gate["reads"] == "corrected" and len(gate["ci95"]) == 2
    assert isinstance(gate["interval_straddles"], bool)
    for kind in ("html", "md", "junit"):
        page = tmp_path / f"gates.{kind}"
        assert run_cli("report", out, "--format", kind, "-o", page).exit_code == 0
        text = " ".join(page.read_text("utf-8").split())
        assert "corrected by people&#x27;s labels, 95% CI" in text or (
            "corrected by people's labels, 95% CI" in text
        ), kind


def test_runs_show_reads_the_gates_again_with_the_labels_made_since(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """A run gated on the judge's mean, labelled afterwards: `runs show` reads its gate on
    the corrected mean (one path: evaluate_gates), says which mean each gate read and that
    the outcome differs from the one recorded; results.json says the same; exit 0."""
    from dataclasses import replace

    from localeval.results.corrected import correct
    from localeval.results.person_values import RANDOM, people_values

    data = demo_copies(tmp_path, RUN_SIZE)
    evaluate(stand_ins, data, *METRICS)
    review = load_review_run("latest")
    made = []
    for sample in review.samples[:ENOUGH]:
        for v in review.verdicts[sample["sample_id"]]:
            mark = "right" if abs(v.raw - 0.5) > 0.2 else "wrong"
            label = review.label_for(sample["sample_id"], v.metric, v.index, mark, "ann")
            made.append(replace(label, selection=RANDOM))
    ids = [s["sample_id"] for s in review.samples]
    judge = [s["scores"]["faithfulness"] for s in review.samples]
    people = people_values(review.samples, made)["faithfulness"].counted
    corrected = correct(judge, ids, people).estimate
    assert corrected is not None
    judge_mean = float(np.mean(judge))
    assert abs(judge_mean - corrected.mean) > 0.01
    threshold = round((judge_mean + corrected.mean) / 2, 4)
    # a new run of the same samples, evaluated before any label: gated on the judge's mean
    evaluate(stand_ins, data, *METRICS, "--no-resume", "--threshold", f"faithfulness={threshold}")
    before = run_cli("runs", "show", "latest")
    assert before.exit_code == 0
    assert "faithfulness: the judge's mean (label 40 more samples" in before.output
    later = load_review_run("latest")
    with LabelStore.open(later.db) as store:
        store.add(later.run.id, [replace(x, id=None) for x in made])
    out = tmp_path / "now.json"
    shown = run_cli("runs", "show", "latest", "-o", out)
    assert shown.exit_code == 0, shown.output
    said = " ".join(shown.output.split())
    passes_now = corrected.mean >= threshold
    verdict = "PASS" if passes_now else "FAIL"
    was = "FAIL" if passes_now else "PASS"
    assert f"faithfulness: the mean corrected by {ENOUGH} labelled samples" in said
    assert f"recorded {was} when evaluated ({judge_mean:.3f}, judge)" in said
    assert f"{verdict} faithfulness = {corrected.mean:.3f} (corrected by people's labels" in said
    gate = next(
        g for g in json.loads(out.read_text("utf-8"))["gates"] if g["metric"] == "faithfulness"
    )
    assert gate["reads"] == "corrected" and gate["passed"] is passes_now
    assert gate["value"] == pytest.approx(corrected.mean)
    # a run asked to gate on the judge keeps reading the judge, and says so
    evaluate(stand_ins, data, *METRICS, "--no-resume", "--gate-on", "judge")
    judged = " ".join(run_cli("runs", "show", "latest").output.split())
    assert "faithfulness: the judge's mean (--gate-on judge)" in judged
