"""The labels, the review page and calibrate as Python objects (localeval.api.labelling,
reviewing, calibrating): what `localeval labels`, `review` and `calibrate` do, as calls."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import warnings
from pathlib import Path
from typing import Any

import pytest
from fakes import HashJudge, ScriptedJudge
from review_runs import demo_copy, evaluate, label_everything, rows
from standins import StandIns

import localeval
from localeval.api import LabelImport, LocalevalWarning, MapsKept, ReviewServer, RunLabels
from localeval.errors import DatasetError, UsageError
from localeval.labels.review_items import load_review_run
from localeval.results.person_values import RANDOM, estimate_order
from localeval.verdict_maps import VerdictMap


@pytest.fixture
def run_id(stand_ins: StandIns, tmp_path: Path) -> str:
    return evaluate(stand_ins, demo_copy(tmp_path))


# -- RunLabels --------------------------------------------------------------------------------


def test_marks_are_stored_per_reviewer_and_undone(run_id: str) -> None:
    labels = RunLabels("latest")
    assert labels.run_id == run_id and labels.current() == []
    verdict = labels.verdicts("billing-1")[0]
    made = labels.mark("billing-1", verdict.metric, verdict.index, "wrong", reviewer="ann")
    labels.mark("billing-1", verdict.metric, None, "too_high", reviewer="bo")
    assert made.id is not None and made.label == float(not verdict.says_yes)
    assert [(x.reviewer, x.mark) for x in labels.current()] == [
        ("ann", "wrong"),
        ("bo", "too_high"),
    ]
    assert [x.mark for x in labels.current("bo")] == ["too_high"]
    undone = labels.undo("ann")
    assert undone is not None and (undone.id, undone.mark) == (made.id, "wrong")
    assert [x.reviewer for x in labels.current()] == ["bo"]
    assert labels.undo("ann") is None
    with pytest.raises(UsageError, match="has no faithfulness verdict 99"):
        labels.mark("billing-1", "faithfulness", 99, "right", reviewer="ann")
    with pytest.raises(UsageError, match=r"^reviewer: give a name"):
        labels.mark("billing-1", verdict.metric, verdict.index, "right", reviewer=" ")


def test_a_run_that_cannot_be_labelled_is_said_on_first_use(run_id: str, db: Path) -> None:
    with pytest.raises(UsageError, match=r"'results\.json' is a file"):
        RunLabels("results.json").current()
    with pytest.raises(UsageError, match="no run 'nope'"):
        RunLabels("nope", db=db).current()
    missing = db.parent / "typo" / "h.db"
    with pytest.raises(UsageError, match="no run history"):
        RunLabels("latest", db=missing).text()
    assert not missing.parent.exists()  # nothing made for a typo


def test_labels_go_to_a_file_and_into_the_next_run(
    stand_ins: StandIns, run_id: str, tmp_path: Path
) -> None:
    made = label_everything(load_review_run("latest"), "ann")
    first = RunLabels("latest")
    exported = first.export(tmp_path / "labels.jsonl")
    assert (exported.run_id, exported.n_labels) == (run_id, len(made))
    written = rows(tmp_path / "labels.jsonl")
    assert [(r["sample_id"], r["metric"], r["label"]) for r in written] == [
        (x.sample_id, x.metric, x.label) for x in made
    ]
    assert first.text() == (tmp_path / "labels.jsonl").read_text("utf-8")
    as_csv = first.text("csv").splitlines()
    assert as_csv[0].startswith("sample_id,metric,verdict,text,label") and len(as_csv) == 63
    with pytest.raises(UsageError, match="format 'xml'"):
        first.text("xml")
    # the next run of the same samples takes them all; a second import stores nothing
    second_id = evaluate(stand_ins, tmp_path / "demo.jsonl", "--no-resume")
    second = RunLabels(second_id)
    done = second.import_file(tmp_path / "labels.jsonl", reviewer="bo")
    assert isinstance(done, LabelImport)
    assert (done.run_id, len(done.stored), done.already, done.unmatched) == (second_id, 62, 0, [])
    assert {x.reviewer for x in done.stored} == {"ann"}  # the file names its reviewer
    assert {x.selection for x in done.stored} == {RANDOM}  # every sample labelled: at random
    again = second.import_file(tmp_path / "labels.jsonl")
    assert (len(again.stored), again.already) == (0, 62)
    # rows that say neither reviewer nor how their samples were picked
    bare = tmp_path / "bare.jsonl"
    keep = ("sample_id", "metric", "verdict", "text", "label")
    bare.write_text("".join(json.dumps({k: r[k] for k in keep if k in r}) + "\n" for r in written))
    chosen = second.import_file(bare, reviewer="bo")
    assert {x.reviewer for x in chosen.stored} == {"bo"} and chosen.not_random == 62
    drawn = second.import_file(bare, reviewer="bo", random_sample=True)
    assert len(drawn.stored) == 62 and drawn.not_random == 0  # now said random: stored again
    assert "faithfulness" in drawn.people and not drawn.people["faithfulness"].missing


def test_export_never_writes_over_the_run_database(run_id: str, db: Path) -> None:
    replaced: list[Path] = []
    with pytest.raises(UsageError, match="is the same file as the run database"):
        RunLabels("latest").export(db, on_replace=lambda target: replaced.append(target.path))
    assert replaced == []
    RunLabels("latest").export(db.parent / "l.csv")
    RunLabels("latest").export(db.parent / "l.csv", on_replace=lambda t: replaced.append(t.path))
    assert replaced == [db.parent / "l.csv"]


def test_a_file_of_another_runs_samples_stores_nothing(run_id: str, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"sample_id": "x-9", "metric": "faithfulness", "label": 1}) + "\n")
    with pytest.raises(DatasetError, match="has no sample 'x-9'; nothing was imported"):
        RunLabels("latest").import_file(other)
    assert RunLabels("latest").current() == []


def test_a_random_sample_once_labelled_counts_for_the_corrected_mean(run_id: str) -> None:
    labels = RunLabels("latest")
    drawn = labels.random_sample(3)
    review = load_review_run("latest")
    judged = [
        s for s in estimate_order(x["sample_id"] for x in review.samples) if review.verdicts[s]
    ]
    assert drawn == judged[:3] == labels.random_sample(3)  # the page's order, every time
    assert labels.random_sample(100) == judged and labels.random_sample(0) == []
    with pytest.raises(UsageError):
        labels.random_sample(-1)
    before = labels.corrected().overall["faithfulness"]
    assert (before.n_labelled, before.estimate) == (0, None)
    for sample_id in drawn:
        for v in labels.verdicts(sample_id):
            if v.metric == "faithfulness":
                labels.mark(sample_id, v.metric, v.index, "right", reviewer="ann")
    after = labels.corrected()
    assert after.overall["faithfulness"].n_labelled == 3
    assert after.overall["faithfulness"].needed == before.needed - 3
    assert set(labels.people()["faithfulness"].random) == set(drawn)


# -- ReviewServer -----------------------------------------------------------------------------


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.status, answer.read().decode()


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    sent = urllib.request.Request(url, json.dumps(body).encode(), method="POST")
    sent.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(sent, timeout=10) as answer:
        return json.loads(answer.read())


def test_the_review_page_serves_while_started_and_frees_its_port(run_id: str) -> None:
    with ReviewServer("latest", reviewer="ann") as server:
        assert server.serving  # start() returned once it listens: no wait here
        assert server.url.startswith("http://127.0.0.1:") and server.run_id == run_id
        assert (server.n_samples, server.n_verdicts, server.reviewer) == (8, 35, "ann")
        status, page = _get(server.url)
        assert status == 200 and '<script src="/review.js"' in page
        label = {"sample_id": "billing-1", "metric": "faithfulness", "verdict": 0, "mark": "right"}
        saved = _post(server.url + "api/labels", label)["saved"]
        assert [(x.reviewer, x.mark, x.created) for x in server.labels()] == [
            ("ann", "right", saved["time"])
        ]
        port = int(server.url.rsplit(":", 1)[1].strip("/"))
    assert not server.serving
    with pytest.raises(urllib.error.URLError):
        _get(server.url)
    with ReviewServer("latest", port=port) as again:  # the port is free again at once
        assert again.url == server.url
    assert [x.mark for x in RunLabels("latest").current("ann")] == ["right"]


def test_a_review_server_is_refused_what_it_cannot_serve(run_id: str) -> None:
    with ReviewServer("latest") as taken:
        port = int(taken.url.rsplit(":", 1)[1].strip("/"))
        with pytest.raises(UsageError, match=f"port {port} on 127.0.0.1 is in use"):
            ReviewServer("latest", port=port)
    with pytest.raises(UsageError, match=r"^reviewer: give a name"):
        ReviewServer("latest", reviewer="")
    server = ReviewServer("latest").start()
    try:
        with pytest.raises(UsageError, match="already started"):
            server.start()
    finally:
        server.stop()
    server.stop()  # twice is harmless


# -- calibrate --------------------------------------------------------------------------------


def test_calibrate_a_labelled_file_as_the_command_does(stand_ins: StandIns, tmp_path: Path) -> None:
    base = {"question": "Q?", "contexts": ["c1"], "metric": "faithfulness", "dataset": "mini"}
    lines = [
        {**base, "id": "1", "answer": "Right.", "label": 1, "pair_id": 1},
        {**base, "id": "2", "answer": "Wrong.", "label": 0, "pair_id": 1},
        {**base, "id": "3", "answer": "Right again.", "label": 1, "pair_id": 2},
        {**base, "id": "4", "answer": "Wrong again.", "label": 0, "pair_id": 2},
        {"question": "no metric", "label": 1},
    ]
    path = tmp_path / "labelled.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines[:4]) + "\n")
    judge = ScriptedJudge([0.9, 0.2, 0.4, 0.6])
    stand_ins.use(judge)
    heard: list[str] = []

    class Heard:
        def replacing(self, target: Any) -> None:
            heard.append("replacing")

        def scoring(self, n_rows: int, metrics: Any) -> None:
            heard.append(f"scoring {n_rows} {list(metrics)}")

        def scored(self, row: Any) -> None:
            heard.append("row")

        def scoring_ended(self) -> None:
            heard.append("ended")

    found = localeval.calibrate(path, output=tmp_path / "c.json", events=Heard())
    judge.assert_done()
    measures = {a.measure: a.value for a in found.table.agreements}
    assert measures["pair_accuracy"] == 0.5 and measures["roc_auc"] == 0.75
    assert found.thresholds == {"faithfulness": 0.3} and found.judge == "scripted"
    assert found.written == tmp_path / "c.json" and found.kept is None
    assert heard == ["replacing", "scoring 4 ['faithfulness']", *["row"] * 4, "ended"]
    # a row that cannot be read is left out with a warning
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(lines[0]) + "\n" + "{not json\n")
    stand_ins.use(ScriptedJudge([0.9]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        localeval.calibrate([bad])
    assert [str(w.message).startswith(f"Skipped: {bad}, line 2") for w in caught] == [True]
    assert caught[0].category is LocalevalWarning
    with pytest.raises(UsageError, match=r"give fit=True too"):
        localeval.calibrate(path, save=True)


def test_calibrate_labels_measures_the_judge_against_the_teams_labels(
    stand_ins: StandIns, run_id: str
) -> None:
    label_everything(load_review_run("latest"), "ann")
    stand_ins.forbid("calibrate_labels loads no model")
    found = localeval.calibrate_labels("latest", fit=True)
    assert found.found is not None and len(found.found.rows) > 0
    assert found.judge == HashJudge.name and [r.run.id for r in found.found.runs] == [run_id]
    groups = {a.metric for a in found.table.agreements}
    assert {"supported", "faithfulness"} <= groups
    assert found.fits is not None and found.kept is not None
    assert (found.kept.judge, found.kept.saved) == (HashJudge.name, None)  # not asked to save


def test_the_maps_kept_are_their_models_toml_text() -> None:
    kept = MapsKept("j", {"supported": VerdictMap("supported", 2.5, -0.75, "halueval", 0.04)})
    assert kept.toml().splitlines()[:3] == [
        '[judges."j".calibration.supported]',
        "a = 2.5000",
        "b = -0.7500",
    ]
