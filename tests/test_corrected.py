"""A run's metrics corrected by the team's labels: people's value per sample
(localeval.results.person_values), the corrected summary in results.json and every view of it,
and only labels of samples picked at random counting for it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from review_runs import demo_copies, evaluate, run_cli
from standins import StandIns

from localeval.prediction_powered import MIN_LABELLED, corrected_mean
from localeval.results.person_values import CHOSEN, PERSON_VALUE, RANDOM, estimate_order
from localeval.runs.labels import LabelStore
from localeval.runs.review_items import ReviewRun, load_review_run

METRICS = ("-m", "faithfulness", "-m", "context_precision", "--cp-usefulness", "judge")


def labelled_run(
    stand_ins: StandIns, folder: Path, n: int, selection: str = RANDOM, n_samples: int = 40
) -> ReviewRun:
    """A run of `n_samples` demo samples with every verdict of its first `n` labelled: the
    judge right where it is sure, wrong elsewhere."""
    evaluate(stand_ins, demo_copies(folder, n_samples), *METRICS)
    review = load_review_run("latest")
    made = []
    for sample in review.samples[:n]:
        for v in review.verdicts[sample["sample_id"]]:
            mark = "right" if abs(v.raw - 0.5) > 0.2 else "wrong"
            label = review.label_for(sample["sample_id"], v.metric, v.index, mark, "ann")
            made.append(replace(label, selection=selection))
    store = LabelStore.open(review.db)
    try:
        store.add(review.run.id, made)
    finally:
        store.close()
    return review


def by_hand(review: ReviewRun, metric: str, n: int) -> tuple[list[float], list[float], list[float]]:
    """The judge's scores on every sample, and on the labelled ones with people's values
    computed here from the labels' definition (docs/reference.md), not from the module."""
    store = LabelStore.open(review.db)
    try:
        labels = {(x.sample_id, x.metric, x.verdict): x.label for x in store.current(review.run.id)}
    finally:
        store.close()
    judge_all = [s["scores"][metric] for s in review.samples]
    judge_lab, people = [], []
    for sample in review.samples[:n]:
        verdicts = [v for v in review.verdicts[sample["sample_id"]] if v.metric == metric]
        values = [labels[(sample["sample_id"], metric, v.index)] for v in verdicts]
        if metric == "faithfulness":
            person = sum(values) / len(values)
        else:  # rank-weighted precision of people's usefulness
            hits, total = 0.0, 0.0
            for k, v in enumerate(values, start=1):
                hits += v
                total += hits / k * v
            person = total / sum(values) if sum(values) else 0.0
        judge_lab.append(sample["scores"][metric])
        people.append(person)
    return judge_all, judge_lab, people


@pytest.mark.both_stores
@pytest.mark.parametrize("metric", ["faithfulness", "context_precision"])
def test_results_json_holds_the_corrected_mean_of_the_formula(
    stand_ins: StandIns, tmp_path: Path, metric: str
) -> None:
    review = labelled_run(stand_ins, tmp_path, 25)
    out = tmp_path / "results.json"
    assert run_cli("runs", "show", "latest", "-o", out).exit_code == 0
    entry = json.loads(out.read_text("utf-8"))["summary"][metric]
    expected = corrected_mean(*by_hand(review, metric, 25))
    assert entry["labels_needed"] == 0
    found = entry["corrected"]
    assert found["n_labelled"] == 25
    assert found["mean"] == pytest.approx(round(expected.mean, 4))
    assert found["ci95"] == pytest.approx([round(v, 4) for v in expected.ci95])
    assert found["judge_mean"] == pytest.approx(entry["mean"], abs=1e-3)
    assert found["labels_only"]["mean"] == pytest.approx(
        round(float(np.mean(by_hand(review, metric, 25)[2])), 4)
    )


def test_too_few_labels_say_how_many_more(stand_ins: StandIns, tmp_path: Path) -> None:
    labelled_run(stand_ins, tmp_path, 5, n_samples=30)
    out = tmp_path / "results.json"
    result = run_cli("runs", "show", "latest", "-o", out)
    assert result.exit_code == 0, result.output
    entry = json.loads(out.read_text("utf-8"))["summary"]["faithfulness"]
    assert entry["corrected"] is None
    assert entry["labels_needed"] == MIN_LABELLED - 5
    assert f"label {MIN_LABELLED - 5} more samples" in " ".join(result.output.split())
    # a run smaller than the minimum can never have one: it says so, not "label more"
    labelled_run(stand_ins, tmp_path, 5, n_samples=12)
    small = " ".join(run_cli("runs", "show", "latest").output.split())
    assert f"needs {MIN_LABELLED} labelled samples; this run has 12" in small


def reached(review: ReviewRun, n: int) -> int:
    """How many samples from the start of the estimate order are among the first `n` of
    the file (the complete start of the order: the only ones a non-random pick counts)."""
    ids = [s["sample_id"] for s in review.samples]
    first = set(ids[:n])
    count = 0
    for sample_id in estimate_order(ids):
        if sample_id not in first:
            break
        count += 1
    return count


def test_labels_picked_otherwise_count_only_where_the_estimate_order_reaches(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    review = labelled_run(stand_ins, tmp_path, 25, selection=CHOSEN)
    out = tmp_path / "results.json"
    assert run_cli("runs", "show", "latest", "-o", out).exit_code == 0
    entry = json.loads(out.read_text("utf-8"))["summary"]["faithfulness"]
    counted = reached(review, 25)
    assert counted < MIN_LABELLED  # the file's first 25 are not the order's first 20
    assert entry["corrected"] is None
    assert entry["labels_needed"] == MIN_LABELLED - counted
    assert entry["labels_not_counted"]["chosen"] == 25 - counted


def test_every_metric_made_of_verdicts_has_a_person_value() -> None:
    from localeval.metrics import spec

    made_of_verdicts = {
        m
        for m in ("faithfulness", "context_recall", "context_precision", "answer_relevancy")
        if (found := spec(m)) is not None and found.verdict_kind
    }
    assert made_of_verdicts <= set(PERSON_VALUE)


def test_every_report_shows_the_corrected_mean(stand_ins: StandIns, tmp_path: Path) -> None:
    labelled_run(stand_ins, tmp_path, 25)
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
        assert "25" in text and f"{entry['judge_mean']:.3f}" in text, kind
    html = (tmp_path / "report.html").read_text("utf-8")
    assert "not calibrated" not in html.split("Corrected by people")[0]
    assert "class='low'" not in html


def test_a_report_without_enough_labels_says_how_to_make_them(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    labelled_run(stand_ins, tmp_path, 3, n_samples=30)
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
    ids = [f"s{i}" for i in range(60)]
    judge = list(rng.uniform(0.7, 1.0, 60))  # the judge reads high: mean about 0.85
    people = {s: float(rng.uniform(0.3, 0.7)) for s in ids[:30]}  # people: about 0.5
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
    data = demo_copies(tmp_path, 30)
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
    assert "label 20 more samples" in " ".join(strict.output.split()).replace(
        str(MIN_LABELLED), "20"
    )
    bad = run_cli("evaluate", data, "--gate-on", "people")
    assert bad.exit_code == 2
    assert "people" in bad.output


def _summary(tmp_path: Path, metric: str = "faithfulness") -> dict:
    out = tmp_path / "shown.json"
    result = run_cli("runs", "show", "latest", "-o", out)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text("utf-8"))["summary"][metric]


@pytest.mark.both_stores
def test_labels_carry_over_to_a_later_run_of_the_same_samples(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    first = labelled_run(stand_ins, tmp_path, 25, n_samples=30)
    data = tmp_path / "demo-30.jsonl"
    # the same samples again: a new run, whose gate reads the corrected mean at once
    again = run_cli("evaluate", data, *METRICS, "--no-progress", "--no-resume")
    assert again.exit_code in (0, 1), again.output
    assert "corrected by people's labels, 95% CI" in again.output
    entry = _summary(tmp_path)
    assert entry["corrected"]["n_labelled"] == 25
    # one answer gains a statement, another sample's contexts change
    rows = [json.loads(line) for line in data.read_text("utf-8").splitlines()]
    rows[0]["answer"] += " It also comes with a free coffee mug."
    rows[1]["contexts"] = ["Nothing here is about the question at all."]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    evaluate(stand_ins, data, *METRICS)
    changed = _summary(tmp_path)
    assert changed["corrected"]["n_labelled"] == 23
    # the changed answer's old statements keep their labels; only the new one is missing
    assert changed["labels_not_counted"]["incomplete"] == 1
    assert first.run.id not in run_cli("runs", "show", "latest").output.split("run:")[1][:40]


def test_labels_of_other_samples_carry_over_but_do_not_count_as_random(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    labelled_run(stand_ins, tmp_path, 25, n_samples=30)
    bigger = demo_copies(tmp_path, 40)  # the first 30 ids are the same samples
    evaluate(stand_ins, bigger, *METRICS)
    entry = _summary(tmp_path)
    counted = reached(load_review_run("latest"), 25)
    assert entry["corrected"] is None
    assert entry["labels_not_counted"]["chosen"] == 25 - counted


def _stored_labels(review: ReviewRun) -> list:
    store = LabelStore.open(review.db)
    try:
        return store.current(review.run.id)
    finally:
        store.close()


@pytest.mark.both_stores
def test_an_import_counts_for_the_estimate_only_when_said_random(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    labelled_run(stand_ins, tmp_path, 22, n_samples=30)
    exported = tmp_path / "labels.jsonl"
    assert run_cli("labels", "export", "latest", "-o", exported).exit_code == 0
    written = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    assert {row["selection"] for row in written} == {RANDOM}  # the export says the mode
    plain = [{k: v for k, v in row.items() if k != "selection"} for row in written]
    exported.write_text("".join(json.dumps(r) + "\n" for r in plain), "utf-8")
    # a run of more samples: the earlier run's labels carry over, but not as random ones
    evaluate(stand_ins, demo_copies(tmp_path, 31), *METRICS)
    assert _summary(tmp_path)["corrected"] is None
    result = run_cli("labels", "import", exported, "--run", "latest")
    assert result.exit_code == 0, result.output
    assert "not counted for the mean corrected by labels" in result.output
    again = load_review_run("latest")
    assert {x.selection for x in _stored_labels(again)} == {CHOSEN}
    result = run_cli("labels", "import", exported, "--run", "latest", "--random-sample")
    assert result.exit_code == 0, result.output
    assert {x.selection for x in _stored_labels(again)} == {RANDOM}
    assert _summary(tmp_path)["corrected"]["n_labelled"] == 22


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"sample_id": "nowhere", "metric": "faithfulness", "verdict": 0, "label": 1}, "no sample"),
        (
            {"sample_id": "billing-1-0", "metric": "faithfulness", "verdict": 0, "label": 1.5},
            "[0, 1]",
        ),
        (
            {"sample_id": "billing-1-0", "metric": "faithfulness", "label": 1, "selection": "x"},
            "random or chosen",
        ),
    ],
)
def test_bad_label_files_store_nothing(
    stand_ins: StandIns, tmp_path: Path, row: dict, says: str
) -> None:
    review = labelled_run(stand_ins, tmp_path, 0, n_samples=3)
    good = {"sample_id": "billing-1-0", "metric": "faithfulness", "verdict": 0, "label": 1}
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", "utf-8")
    result = run_cli("labels", "import", path, "--run", "latest")
    assert result.exit_code == 2
    assert says in result.output and "line 2" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _stored_labels(review) == []


def test_diff_gives_the_paired_corrected_change_or_says_it_is_the_judges(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    from localeval.results.diff import corrected_change

    labelled_run(stand_ins, tmp_path, 25, n_samples=30)
    data = tmp_path / "demo-30.jsonl"
    evaluate(stand_ins, data, *METRICS, "--no-resume")  # the labels carry over to it
    result = run_cli("diff", "latest~1", "latest", "-o", tmp_path / "diff.json")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "Corrected by people's labels (paired" in said
    assert "faithfulness: +0.000 [" in said and "from 25 samples labelled in both runs" in said
    # fewer labels (the first runs' are of other samples than these): the judge's change
    labelled_run(stand_ins, tmp_path, 4, n_samples=29)
    evaluate(stand_ins, tmp_path / "demo-29.jsonl", *METRICS, "--no-resume")
    few = " ".join(run_cli("diff", "latest~1", "latest").output.split())
    assert "These changes are the judge's" in few
    # the formula on differences: the judge's changes corrected by people's
    from localeval.results.diff import MetricChange

    ids = [f"s{i}" for i in range(40)]
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, 40)
    new = np.clip(base + 0.2, 0, 1)
    people_base = {s: 0.5 for s in ids[:30]}
    people_new = {s: 0.4 for s in ids[:30]}  # people see a drop where the judge sees a rise
    plain = MetricChange("faithfulness", 0.5, 0.7, 40, 0.2, (0.1, 0.3), "better")
    found = corrected_change(plain, (base, new), ids, (people_base, people_new)).corrected
    assert found is not None and found.mean == pytest.approx(-0.1, abs=1e-9)
    assert found.ci95[0] <= -0.1 <= found.ci95[1]


def test_two_reviewers_who_disagree_count_as_their_mean(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    review = labelled_run(stand_ins, tmp_path, 20, n_samples=24)
    sample = review.samples[0]["sample_id"]
    verdicts = [v for v in review.verdicts[sample] if v.metric == "faithfulness"]
    mine = _stored_labels(review)
    first = next(
        x
        for x in mine
        if (x.sample_id, x.metric, x.verdict) == (sample, "faithfulness", verdicts[0].index)
    )
    other = replace(first, reviewer="bo", label=1 - first.label, mark=None, id=None)
    store = LabelStore.open(review.db)
    try:
        store.add(review.run.id, [other])
    finally:
        store.close()
    entry = _summary(tmp_path)
    assert entry["labels_disagreeing"] == 1
    # people's value of that sample: the first verdict counts as the two reviewers' mean
    judge_all, judge_lab, people = by_hand(review, "faithfulness", 20)
    people[0] += (0.5 - other.label) / len(verdicts)  # by_hand read bo's, the latest
    expected = corrected_mean(judge_all, judge_lab, people)
    assert entry["corrected"]["mean"] == pytest.approx(round(expected.mean, 4))
    shown = " ".join(run_cli("runs", "show", "latest").output.split())
    assert "reviewers disagree on 1 verdicts (their mean counts)" in shown


def test_a_metric_the_embedder_scores_has_no_corrected_mean(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    data = demo_copies(tmp_path, 4)
    evaluate(stand_ins, data, "-m", "faithfulness", "-m", "context_precision")
    summary = json.loads(
        (lambda out: (run_cli("runs", "show", "latest", "-o", out), out)[1])(
            tmp_path / "r.json"
        ).read_text("utf-8")
    )["summary"]
    assert "labels_needed" in summary["faithfulness"]
    # English chunks are the embedder's: no verdicts to label, so no line to chase
    assert "labels_needed" not in summary["context_precision"]


def test_every_report_says_a_gate_read_the_corrected_mean(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    labelled_run(stand_ins, tmp_path, 25, n_samples=30)
    data = tmp_path / "demo-30.jsonl"
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


def test_the_worked_examples_labels_match_every_demo_statement(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """docs/corrected-example.md imports examples/demo-labels.jsonl into a demo run."""
    from review_runs import DEMO, demo_copy

    evaluate(stand_ins, demo_copy(tmp_path), "-m", "faithfulness")
    labels = DEMO.parent / "demo-labels.jsonl"
    result = run_cli("labels", "import", labels, "--run", "latest", "--random-sample")
    assert result.exit_code == 0, result.output
    n = len(labels.read_text("utf-8").splitlines())
    assert f"Imported {n} labels" in result.output and "0 matched no verdict" in result.output
    review = load_review_run("latest")
    statements = [v for s in review.verdicts.values() for v in s if v.metric == "faithfulness"]
    assert len(statements) == n


def test_a_sample_skipped_in_the_estimate_order_ends_what_counts(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """Labelled in the estimate order, the samples count up to the first one skipped: a
    reviewer who passes over a hard sample cannot bias the estimate."""
    evaluate(stand_ins, demo_copies(tmp_path, 30), *METRICS)
    review = load_review_run("latest")
    order = review.estimate_order()
    assert order == estimate_order(s["sample_id"] for s in review.samples)
    skipped = 22
    chosen = order[:skipped] + order[skipped + 1 : 26]
    made = []
    for sample_id in chosen:
        for v in review.verdicts[sample_id]:
            made.append(review.label_for(sample_id, v.metric, v.index, "right", "ann"))
    store = LabelStore.open(review.db)
    try:
        store.add(review.run.id, made)
    finally:
        store.close()
    entry = _summary(tmp_path)
    assert entry["corrected"]["n_labelled"] == skipped
    assert entry["labels_not_counted"]["chosen"] == len(chosen) - skipped
    exported = tmp_path / "labels.jsonl"
    assert run_cli("labels", "export", "latest", "-o", exported).exit_code == 0
    rows = [json.loads(line) for line in exported.read_text("utf-8").splitlines()]
    counted = {r["sample_id"] for r in rows if r["selection"] == RANDOM}
    assert counted == set(order[:skipped])  # the export says which count
