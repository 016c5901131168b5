"""Reviewing the judge: a run's verdicts read generically, labels kept in the run database
as events, the review app on a real server, labels carried as files, and
`calibrate --labels` measuring the judge against them."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeEmbedder, HashJudge
from review_runs import demo_copies, demo_copy, evaluate, label_everything, rows, run_cli
from run_db import column_names, database_at_version, query
from standins import StandIns

from localeval.calibration.fit import MIN_FOLDED_ROWS, fit_maps
from localeval.calibration.labels import calibrate_labels
from localeval.calibration.rows import RowScore
from localeval.config import load_models_config
from localeval.database import MIGRATIONS, Location, open_store, schema_version
from localeval.labels.review_items import ReviewRun, load_review_run
from localeval.labels.store import LabelStore
from localeval.metrics import spec
from localeval.results.verdicts import rests_on, sample_verdicts
from localeval.review.app import POLICY, asset, review_app
from localeval.review.server import bind_local, review_server, serve, url_of


@pytest.fixture
def demo_run(stand_ins: StandIns, tmp_path: Path) -> ReviewRun:
    evaluate(stand_ins, demo_copy(tmp_path))
    return load_review_run("latest")


# -- the verdicts -----------------------------------------------------------------------------


def test_every_verdict_of_every_judged_metric_is_read(demo_run: ReviewRun) -> None:
    kinds: set[str] = set()
    for sample in demo_run.samples:
        verdicts = sample_verdicts(sample)
        for metric, details in sample["details"].items():
            described = spec(metric)
            raw = described.raw_verdicts(details) if described else None
            mine = [v for v in verdicts if v.metric == metric]
            assert len(mine) == (len(raw) if raw else 0), (sample["sample_id"], metric)
            for v in mine:
                kinds.add(v.kind)
                labels = details.get("verdicts")
                if isinstance(labels, list):  # statements and chunks say their verdict
                    assert v.says_yes == (labels[v.index] in ("supported", "attributed", "useful"))
                if metric == "faithfulness":
                    assert v.text == details["statements"][v.index]
                if v.noun == "chunk":
                    assert v.text == sample["contexts"][v.index]
    assert kinds == {"supported", "answers", "useful"}
    assert demo_run.n_verdicts == 35 and demo_run.n_scores == 27


def test_a_statement_rests_on_the_context_sentence_sharing_its_rarer_words() -> None:
    contexts = [
        "Nimbus Drive offers three plans. The Personal plan is free.",
        "The Team plan costs 12 euros per user per month. It includes 2 TB per user.",
    ]
    found = rests_on("The Team plan costs 12 euros a month.", contexts)
    assert found == "The Team plan costs 12 euros per user per month."
    assert rests_on("Uploads are encrypted with a hardware token.", contexts) is None
    assert rests_on("团队版每月 12 欧元。", ["个人版免费。团队版每位用户每月 12 欧元。"]) == (
        "团队版每位用户每月 12 欧元。"
    )


def test_the_statement_is_looked_for_in_what_it_was_judged_against(
    demo_run: ReviewRun,
) -> None:
    """An answer statement rests on a context sentence, never on the answer it came from."""
    sample = next(s for s in demo_run.samples if s["sample_id"] == "billing-1")
    (statement,) = [v for v in demo_run.verdicts["billing-1"] if v.metric == "faithfulness"]
    assert statement.rests_on is not None
    assert statement.rests_on in sample["contexts"][1]


# -- marks and labels ------------------------------------------------------------------------


def test_a_mark_says_what_is_true(demo_run: ReviewRun) -> None:
    verdict = next(v for v in demo_run.verdicts["product-1"] if v.metric == "faithfulness")
    right = demo_run.label_for("product-1", "faithfulness", verdict.index, "right", "ann")
    wrong = demo_run.label_for("product-1", "faithfulness", verdict.index, "wrong", "ann")
    assert (right.label, wrong.label) == (float(verdict.says_yes), float(not verdict.says_yes))
    assert right.text == verdict.text and right.reviewer == "ann"
    score = demo_run.score("product-1", "faithfulness")
    assert score is not None
    passes = float(score >= demo_run.gate("faithfulness"))
    marks = {
        m: demo_run.label_for("product-1", "faithfulness", None, m, "ann").label
        for m in ("too_high", "right", "too_low")
    }
    assert marks == {"too_high": 0.0, "right": passes, "too_low": 1.0}
    with pytest.raises(Exception, match="a verdict is marked right or wrong, not 'too_high'"):
        demo_run.label_for("product-1", "faithfulness", verdict.index, "too_high", "ann")
    with pytest.raises(Exception, match="sample 'product-1' has no faithfulness verdict 9"):
        demo_run.label_for("product-1", "faithfulness", 9, "right", "ann")
    with pytest.raises(Exception, match="sample 'nope' has no judged faithfulness score"):
        demo_run.label_for("nope", "faithfulness", None, "right", "ann")


@pytest.mark.both_stores
def test_labels_are_kept_as_events_per_reviewer_and_undo_takes_back_ones_own(
    demo_run: ReviewRun,
) -> None:
    connection = open_store(demo_run.db)
    assert schema_version(connection) == len(MIGRATIONS)
    store = LabelStore(connection, demo_run.db)
    run_id = demo_run.run.id
    first = demo_run.label_for("billing-1", "faithfulness", 0, "wrong", "ann")
    store.add(run_id, [first])
    store.add(run_id, [demo_run.label_for("billing-1", "faithfulness", 0, "wrong", "bob")])
    store.add(run_id, [demo_run.label_for("billing-1", "faithfulness", 0, "right", "ann")])
    current = {(x.reviewer, x.mark) for x in store.current(run_id)}
    assert current == {("bob", "wrong"), ("ann", "right")}
    assert len(store.events(run_id)) == 3
    undone = store.undo(run_id, "ann")
    assert undone is not None and undone.mark == "right"
    # ann's earlier label is her label again; bob's is untouched
    assert {(x.reviewer, x.mark) for x in store.current(run_id)} == {
        ("ann", "wrong"),
        ("bob", "wrong"),
    }
    assert store.undo(run_id, "carl") is None
    store.close()


@pytest.mark.both_stores
def test_a_database_from_before_labels_gets_their_table_and_keeps_its_runs(
    demo_run: ReviewRun, another_database: Location
) -> None:
    labels = next(i for i, sql in enumerate(MIGRATIONS) if "CREATE TABLE run_labels" in sql)
    path = another_database
    old = database_at_version(path, labels)
    columns = column_names(old, "runs")
    (row,) = query(demo_run.db, f"SELECT {', '.join(columns)} FROM runs")
    old.execute(
        f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(row))})", row
    )
    old.close()
    store = LabelStore.open(path)
    assert schema_version(store.connection) == len(MIGRATIONS)
    assert store.current(demo_run.run.id) == []
    store.close()
    assert load_review_run(demo_run.run.id, path).run.id == demo_run.run.id


def test_a_database_another_process_is_writing_is_said_at_once(
    demo_run: ReviewRun, tmp_path: Path
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\nprint('held', flush=True)\ntime.sleep(60)",
            str(demo_run.db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        result = run_cli("review", "latest")
        assert time.monotonic() - started < 10
        assert result.exit_code == 2
        assert result.output.strip().splitlines() == [
            f"Error: database {demo_run.db} is being written by another process (it holds "
            "the write lock); try again when that process is done"
        ]
    finally:
        holder.kill()
        holder.wait()


# -- the app on a real server ----------------------------------------------------------------


@contextmanager
def serving(review: ReviewRun, reviewer: str) -> Iterator[str]:
    sock = bind_local(0)
    url = url_of(sock)
    server = review_server(review_app(review, reviewer))
    thread = threading.Thread(target=serve, args=(server, sock), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        yield url
    finally:
        server.should_exit = True
        thread.join(10)


def request(
    url: str, body: Any = None, content_type: str = "application/json", host: str | None = None
) -> tuple[int, Any, dict[str, str]]:
    data = None if body is None else json.dumps(body).encode()
    sent = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    sent.add_header("Content-Type", content_type)
    if host:
        sent.add_header("Host", host)
    try:
        with urllib.request.urlopen(sent, timeout=10) as answer:
            raw = answer.read()
            return answer.status, _decoded(raw), {k.lower(): v for k, v in answer.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, _decoded(error.read()), {}


def _decoded(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode()


@pytest.mark.both_stores
def test_each_label_is_in_the_database_before_the_page_hears_back(demo_run: ReviewRun) -> None:
    with serving(demo_run, "ann") as url:
        status, page, headers = request(url)
        assert status == 200 and headers["content-security-policy"] == POLICY
        assert '<script src="/review.js"' in page
        label = {"sample_id": "billing-1", "metric": "faithfulness", "verdict": 0, "mark": "wrong"}
        status, answer, _ = request(url + "api/labels", label)
        assert status == 200, answer
        # in the database already, with the reviewer and the time
        stored = query(
            demo_run.db,
            "SELECT sample_id, metric, verdict, mark, reviewer, created FROM run_labels",
        )
        assert [row[:5] for row in stored] == [("billing-1", "faithfulness", 0, "wrong", "ann")]
        assert stored[0][5] == answer["saved"]["time"]
        # a reload gets it back
        status, run, _ = request(url + "api/run")
        assert status == 200 and run["reviewer"] == "ann"
        assert [(x["sample_id"], x["mark"]) for x in run["labels"]] == [("billing-1", "wrong")]
        assert run["n_verdicts"] == 35
        # what a page of another site could send is refused
        status, answer, _ = request(url + "api/labels", label, content_type="text/plain")
        assert (status, answer) == (415, {"error": "send JSON (Content-Type: application/json)"})
        status, _, _ = request(url + "api/run", host="evil.example")
        assert status == 400
        status, answer, _ = request(url + "api/labels", {**label, "verdict": 7})
        assert (status, answer) == (
            400,
            {"error": "sample 'billing-1' has no faithfulness verdict 7"},
        )
        status, answer, _ = request(url + "api/undo", {})
        assert status == 200 and answer["undone"]["mark"] == "wrong" and answer["current"] is None


@pytest.mark.both_stores
def test_a_label_is_answered_with_itself_whatever_the_run_holds(demo_run: ReviewRun) -> None:
    """The reply to a label or an undo holds what it changed, not every label of the run: its
    size is the same with no other label and with thousands of other reviewers' labels."""
    verdict = {"sample_id": "billing-1", "metric": "faithfulness", "verdict": 0}
    with serving(demo_run, "ann") as url:
        _, first, _ = request(url + "api/labels", {**verdict, "mark": "right"})
        _, second, _ = request(url + "api/labels", {**verdict, "mark": "wrong"})
        _, undone, _ = request(url + "api/undo", {})
        # undo takes the latest back: the label before it is ann's again
        assert (undone["undone"]["mark"], undone["current"]["mark"]) == ("wrong", "right")
        alone = [len(json.dumps(answer)) for answer in (first, second, undone)]
        store = LabelStore.open(demo_run.db)
        others = [
            demo_run.label_for("billing-1", "faithfulness", 0, "right", f"reviewer {n}")
            for n in range(3000)
        ]
        store.add(demo_run.run.id, others)
        store.close()
        _, first, _ = request(url + "api/labels", {**verdict, "mark": "right"})
        _, second, _ = request(url + "api/labels", {**verdict, "mark": "wrong"})
        _, undone, _ = request(url + "api/undo", {})
        assert [len(json.dumps(answer)) for answer in (first, second, undone)] == alone
        assert max(alone) < 1000


def test_the_page_gets_text_in_the_order_the_judge_read_it(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    # on screen "It is in France."; the judge read "ecnarF" (a right-to-left override)
    reversed_answer = "It is in \u202eecnarF\u202c."
    row = {
        "sample_id": "bidi-1",
        "question": "Where is Paris?",
        "answer": reversed_answer,
        "contexts": ["Paris is in \u2067France."],
        "category": "geo\u202e",
    }
    data = tmp_path / "bidi.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    evaluate(stand_ins, data, "-m", "faithfulness")
    with serving(load_review_run("latest"), "ann") as url:
        status, run, _ = request(url + "api/run")
        assert status == 200
        (sample,) = run["samples"]
        assert sample["answer"] == "It is in \ufffdecnarF\ufffd."
        assert sample["contexts"] == ["Paris is in \ufffdFrance."]
        assert sample["category"] == "geo\ufffd"
        assert sample["verdicts"][0]["text"] == "It is in \ufffdecnarF\ufffd."
        for control in ("\u202e", "\u202c", "\u2067"):
            assert control not in json.dumps(run, ensure_ascii=False)
        # a label is still stored under the sample's own id and the verdict's own text
        label = {"sample_id": "bidi-1", "metric": "faithfulness", "verdict": 0, "mark": "right"}
        status, answer, _ = request(url + "api/labels", label)
        assert status == 200, answer
        assert answer["saved"]["text"] == reversed_answer


def test_the_page_asks_for_nothing_outside_the_app() -> None:
    for name in ("page.html", "review.js", "saving.js", "review.css"):
        text = asset(name)
        assert "http://" not in text and "https://" not in text and "//cdn" not in text
    for name in ("review.js", "saving.js"):  # run text is set as text, never as markup
        assert "innerHTML" not in asset(name)


# -- bad input: one line each ----------------------------------------------------------------


@pytest.mark.both_stores
def test_review_refuses_what_it_cannot_serve(
    stand_ins: StandIns, tmp_path: Path, db: Location
) -> None:
    result = run_cli("review", "latest")
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"Error: no run history at {db}: `localeval evaluate DATA` creates it "
        "(or give --db PATH / set LOCALEVAL_DB)"
    )
    data = demo_copy(tmp_path)
    run_id = evaluate(stand_ins, data, "-m", "bleu")
    result = run_cli("review", "latest")
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"Error: run {run_id} holds no judge verdicts to review (its metrics: bleu); "
        "evaluate with a judge metric such as faithfulness"
    )
    result = run_cli("review", "nope")
    assert (result.exit_code, result.output.strip()) == (
        2,
        f"Error: no run 'nope' in {db} (see `localeval runs list`)",
    )
    result = run_cli("review", "results.json")
    assert result.output.strip() == (
        "Error: 'results.json' is a file; labels are kept with a run of the history: name the "
        "run (latest, latest~N, an id), see `localeval runs list`"
    )
    evaluate(stand_ins, data)
    taken = bind_local(0)
    try:
        port = taken.getsockname()[1]
        result = run_cli("review", "latest", "--port", port)
        assert (result.exit_code, result.output.strip()) == (
            2,
            f"Error: port {port} on 127.0.0.1 is in use; give another --port, or leave it out "
            "for a free one",
        )
    finally:
        taken.close()


# -- labels as files -------------------------------------------------------------------------


@pytest.mark.both_stores
def test_labels_travel_to_the_next_run_of_the_same_samples(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    data = demo_copy(tmp_path)
    evaluate(stand_ins, data)
    first = load_review_run("latest")
    made = label_everything(first, "ann")
    exported = tmp_path / "labels.jsonl"
    result = run_cli("labels", "export", "latest", "-o", exported)
    assert result.exit_code == 0, result.output
    written = rows(exported)
    assert len(written) == len(made) == 62
    assert [
        (r["sample_id"], r["metric"], r.get("text"), r["label"], r["mark"]) for r in written
    ] == [(x.sample_id, x.metric, x.text or None, x.label, x.mark) for x in made]
    assert written[0]["label_kind"].startswith("1: the ")
    # the next run of the same samples, one answer changed
    changed = rows(data)
    changed[0]["answer"] = "The Team plan costs 15 euros."
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in changed), "utf-8")
    second_id = evaluate(stand_ins, data)
    result = run_cli("labels", "import", exported, "--run", "latest")
    assert result.exit_code == 0, result.output
    second = load_review_run("latest")
    lost = [r for r in written if r["sample_id"] == "billing-1" and "text" in r]
    lost = [r for r in lost if r["metric"] != "context_recall"]  # the reference is unchanged
    assert f"Imported {62 - len(lost)} labels into run {second_id}; 0 were there already, " in (
        result.output
    )
    assert f"{len(lost)} matched no verdict or score of the run" in result.output
    again = run_cli("labels", "import", exported, "--run", "latest")
    assert f"Imported 0 labels into run {second_id}; {62 - len(lost)} were there already" in (
        again.output
    )
    result = run_cli("labels", "export", "latest")
    assert result.exit_code == 0
    back = [json.loads(line) for line in result.stdout.splitlines()]
    kept = [r for r in written if r not in lost]
    assert [
        {k: r[k] for k in ("sample_id", "metric", "label", "reviewer", "time")} for r in back
    ] == [{k: r[k] for k in ("sample_id", "metric", "label", "reviewer", "time")} for r in kept]
    assert second.run.id == second_id


def test_a_bad_labels_file_is_named_with_its_line(demo_run: ReviewRun, tmp_path: Path) -> None:
    bad = tmp_path / "labels.jsonl"
    bad.write_text(
        '{"id": "billing-1", "metric": "faithfulness", "label": 1}\n'
        '{"id": "billing-1", "metric": "faithfulness", "label": 2}\n',
        "utf-8",
    )
    result = run_cli("labels", "import", bad, "--run", "latest")
    assert (result.exit_code, result.output.strip()) == (
        2,
        f"Error: {bad}, line 2, field 'label': must be a number in [0, 1], got 2",
    )


# -- calibrate --labels ----------------------------------------------------------------------


@pytest.mark.both_stores
def test_calibrate_measures_the_judge_against_the_teams_labels(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    data = demo_copy(tmp_path)
    run_id = evaluate(stand_ins, data)
    result = run_cli("calibrate", "--labels", "latest")
    assert (result.exit_code, result.output.strip()) == (
        2,
        f"Error: run {run_id} has no labels yet: `localeval review latest` makes them, "
        f"`localeval labels import FILE --run {run_id}` brings them from a file",
    )
    label_everything(load_review_run("latest"), "ann")
    result = run_cli("calibrate", "--labels", "latest", "-o", tmp_path / "agreement.json")
    assert result.exit_code == 0, result.output
    assert (
        f"Judge {HashJudge.name} against 62 labels of your team on run {run_id} (demo.jsonl):"
        in result.output
    )
    for group in ("supported", "answers", "useful", "faithfulness"):
        assert f"team labels    {group:<18} ece" in result.output
    assert "team labels    supported          roc_auc" in result.output
    figures = json.loads((tmp_path / "agreement.json").read_text())
    assert figures["labels"] == 62 and figures["runs"] == [run_id]
    result = run_cli("calibrate", "--labels", "latest", "--judge", "j")
    assert "--judge, --embedder and --limit do not apply" in result.output


def test_calibrate_on_the_labels_of_four_reviewers_of_1000_samples_takes_seconds(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """31,000 labels: each figure's 2,000 resamples are drawn once for all of a group's
    figures, counted per distinct score instead of sorted one by one (CPU seconds, which
    the machine's load does not stretch: about 20 before, 2 now)."""
    evaluate(stand_ins, demo_copies(tmp_path, 1000))
    review = load_review_run("latest")
    for reviewer in ("ann", "bob", "cy", "dee"):
        label_everything(review, reviewer)
    started = time.process_time()
    found = calibrate_labels(["latest"])
    spent = time.process_time() - started
    assert len(found.rows) == 31_000 and found.stale == 0
    # four reviewers who always agree
    agreement = next(a for a in found.agreements if a.measure == "agreement")
    assert (agreement.value, agreement.n, agreement.ci95) == (1.0, 6 * 7750, (1.0, 1.0))
    print(f"calibrate --labels on 31,000 labels: {spent:.1f} s of CPU")
    assert spent < 8, f"{spent:.1f} s of CPU"


@pytest.mark.both_stores
def test_maps_fitted_on_the_teams_labels_say_so_in_the_summary(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    class EntryJudge(HashJudge):
        """The hash judge under the name of the stand-ins' models.toml entry, as a real
        judge's runs record the entry's name."""

        name = load_models_config(stand_ins.models).judge().name

    data = demo_copy(tmp_path)
    evaluate(stand_ins, data, judge=EntryJudge())
    review = load_review_run("latest")
    # the team says a statement is supported only where the judge is quite sure: a map that
    # moves the judge's middling probabilities down fits better than none
    made = []
    for sample in review.samples:
        for v in review.verdicts[sample["sample_id"]]:
            if v.kind == "supported":
                truth = v.raw >= 0.75
                mark = "right" if truth == v.says_yes else "wrong"
                made.append(review.label_for(sample["sample_id"], v.metric, v.index, mark, "ann"))
    assert len(made) >= MIN_FOLDED_ROWS  # enough for folds to keep a map
    store = LabelStore.open(review.db)
    store.add(review.run.id, made)
    store.close()
    result = run_cli("calibrate", "--labels", "latest", "--fit", "--save")
    assert result.exit_code == 0, result.output
    assert (
        f"Calibration of judge {EntryJudge.name} saved in {stand_ins.models.resolve()}"
        in result.output
    )
    saved = stand_ins.models.read_text()
    assert f'fitted_on = "{len(made)} verdicts labelled by your team (demo), AUC' in saved
    stand_ins.use(EntryJudge(), FakeEmbedder())
    result = run_cli("evaluate", data, "--no-progress")
    text = " ".join(result.output.split())
    assert (
        f"Calibrated on supported: {len(made)} verdicts labelled by your team (demo), AUC" in text
    )
    markdown = run_cli("report", "latest", "-f", "md").output
    assert f"calibrated for supported on `{len(made)} verdicts labelled by your team" in markdown
    page = run_cli("report", "latest").output
    assert f"Calibrated on supported: {len(made)} verdicts labelled by your team" in page


def _rows(probabilities: list[float], label: Any) -> list[RowScore]:
    rows = []
    for n, p in enumerate(probabilities):
        row = RowScore("demo", "faithfulness", float(label(p)), ("demo", f"s{n}"), p)
        row.verdict_kind, row.verdicts = "supported", [p]
        rows.append(row)
    return rows


def test_a_map_of_a_teams_labels_needs_enough_of_them_in_the_judges_order() -> None:
    spread = [round(0.05 + 0.9 * i / 39, 3) for i in range(40)]
    kept = fit_maps(_rows(spread, lambda p: p >= 0.7), folds_suffice=True)["supported"]
    assert kept.kept and kept.scheme == "5 folds of demo"
    # the same labels without folds_suffice (bench files): one dataset never keeps a map
    assert not fit_maps(_rows(spread, lambda p: p >= 0.7))["supported"].kept
    few = fit_maps(_rows(spread[::4], lambda p: p >= 0.7), folds_suffice=True)["supported"]
    assert few.not_kept_because() == (
        f"it was measured on 10 labelled rows; {MIN_FOLDED_ROWS} are needed"
    )
    reversed_ = fit_maps(_rows(spread, lambda p: p < 0.5), folds_suffice=True)["supported"]
    assert reversed_.map.a <= 0
    assert reversed_.not_kept_because() == (
        "it would turn the judge's order of verdicts round (a <= 0)"
    )
