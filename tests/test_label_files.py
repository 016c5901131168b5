"""Labels as files (`labels export`, `labels import`): each verdict found again by its
number, also where two verdicts say the same text or one says nothing; an import stored
once however often and however many at once; CSV both ways. `calibrate --labels` never
writes over the models file it saves maps into, and `runs delete`/`runs prune` keep a
labelled run unless asked."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from corrected_runs import stored_labels
from review_runs import evaluate, rows, run_cli
from run_db import query
from standins import StandIns

from localeval.cli import main
from localeval.database import Location, parse_location
from localeval.errors import UsageError
from localeval.history.cleanup import delete_runs, runs_to_delete
from localeval.history.store import open_history
from localeval.labels import label_files
from localeval.labels.review_items import ReviewRun, load_review_run
from localeval.labels.store import Label, LabelStore

#: the labels' tests run with an SQLite file and with a PostgreSQL database
pytestmark = pytest.mark.both_stores

#: a sample whose verdicts repeat a text (a sentence said twice, a chunk retrieved twice)
#: and where one says nothing (an empty chunk)
REPEATING = {
    "sample_id": "s1",
    "question": "What does the Team plan cost?",
    "contexts": ["The Team plan costs 12 euros.", "The Team plan costs 12 euros.", ""],
    "answer": "It costs 12 euros. It costs 12 euros.",
    "reference_answer": "It costs 12 euros. It costs 12 euros.",
}
METRICS = ("-m", "faithfulness", "-m", "context_recall", "-m", "context_precision")
JUDGED_CHUNKS = ("--context-precision-usefulness", "judge")


def repeating_run(stand_ins: StandIns, folder: Path, *args: str) -> ReviewRun:
    data = folder / "repeating.jsonl"
    data.write_text(json.dumps(REPEATING) + "\n", "utf-8")
    evaluate(stand_ins, data, *METRICS, *JUDGED_CHUNKS, *args)
    return load_review_run("latest")


def label_alternately(review: ReviewRun, reviewer: str = "ann") -> list[Label]:
    """Every verdict marked right and wrong in turn (so two of the same text differ), and
    every judged score too high."""
    made = []
    for n, v in enumerate(review.verdicts["s1"]):
        mark = ("right", "wrong")[n % 2]
        made.append(review.label_for("s1", v.metric, v.index, mark, reviewer))
    for metric in review.judged_metrics("s1"):
        made.append(review.label_for("s1", metric, None, "too_high", reviewer))
    store = LabelStore.open(review.db)
    try:
        return store.add(review.run.id, made)
    finally:
        store.close()


def item_labels(review: ReviewRun) -> list[tuple[str, int | None, str, float, str | None]]:
    """The run's current labels: (metric, verdict, text, label, mark)."""
    store = LabelStore.open(review.db)
    try:
        held = store.current(review.run.id)
    finally:
        store.close()
    return [(x.metric, x.verdict, x.text, x.label, x.mark) for x in held]


def stored_rows() -> int:
    return int(query(stored_location(), "SELECT count(*) FROM run_labels")[0][0])


def stored_location() -> Location:
    return parse_location(os.environ["LOCALEVAL_DB"])


def test_verdicts_of_the_same_text_or_of_none_keep_their_own_labels(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    first = repeating_run(stand_ins, tmp_path)
    texts = [(v.metric, v.text) for v in first.verdicts["s1"]]
    assert texts.count(("faithfulness", "It costs 12 euros.")) == 2
    assert ("context_precision", "") in texts  # the empty chunk is a verdict
    made = label_alternately(first)
    exported = tmp_path / "labels.jsonl"
    assert run_cli("labels", "export", "latest", "-o", exported).exit_code == 0
    written = rows(exported)
    assert [(r["metric"], r.get("verdict"), r.get("text")) for r in written] == [
        (x.metric, x.verdict, x.text if x.verdict is not None else None) for x in made
    ]
    second = repeating_run(stand_ins, tmp_path, "--no-resume")
    assert second.run.id != first.run.id
    result = run_cli("labels", "import", exported, "--run", "latest")
    assert (result.exit_code, result.stdout) == (
        0,
        f"Imported {len(made)} labels into run {second.run.id}; 0 were there already, "
        "0 matched no verdict or score of the run\n",
    )
    assert item_labels(second) == item_labels(first)
    # the empty chunk's label stays a verdict's; the score's "too high" is untouched
    empty = next(x for x in made if x.metric == "context_precision" and x.verdict == 2)
    assert empty.text == "" and empty.mark == "right"
    assert ("context_precision", 2, "", empty.label, "right") in item_labels(second)
    assert ("context_precision", None, "", 0.0, "too_high") in item_labels(second)


def test_importing_a_file_again_stores_nothing(stand_ins: StandIns, tmp_path: Path) -> None:
    label_alternately(repeating_run(stand_ins, tmp_path))
    exported = tmp_path / "labels.jsonl"
    run_cli("labels", "export", "latest", "-o", exported)
    second = repeating_run(stand_ins, tmp_path, "--no-resume")
    counts = []
    for _ in range(3):
        result = run_cli("labels", "import", exported, "--run", "latest")
        assert result.exit_code == 0, result.output
        counts.append(stored_rows())
    n = len(rows(exported))
    assert counts == [2 * n, 2 * n, 2 * n]
    assert result.output == (
        f"Imported 0 labels into run {second.run.id}; {n} were there already, 0 matched no "
        "verdict or score of the run\n"
    )


def test_two_imports_at_once_store_each_label_once(
    stand_ins: StandIns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another `labels import` of the same file lands between this one's reading of the run
    and its writing (the slowest moment to be overtaken): each label is stored once."""
    label_alternately(repeating_run(stand_ins, tmp_path))
    exported = tmp_path / "labels.jsonl"
    run_cli("labels", "export", "latest", "-o", exported)
    second = repeating_run(stand_ins, tmp_path, "--no-resume")
    real = label_files.plan_import
    other: list[subprocess.CompletedProcess[str]] = []

    def overtaken(*args: Any, **kwargs: Any) -> label_files.ImportPlan:
        plan = real(*args, **kwargs)
        command = [sys.executable, "-m", "localeval.cli", "labels", "import", str(exported)]
        other.append(subprocess.run([*command, "--run", "latest"], capture_output=True, text=True))
        return plan

    monkeypatch.setattr(label_files, "plan_import", overtaken)
    result = run_cli("labels", "import", exported, "--run", "latest")
    n = len(rows(exported))
    assert other[0].returncode == 0, other[0].stderr
    assert f"Imported {n} labels into run {second.run.id}" in other[0].stdout
    assert (result.exit_code, result.output) == (
        0,
        f"Imported 0 labels into run {second.run.id}; {n} were there already, 0 matched no "
        "verdict or score of the run\n",
    )
    assert stored_rows() == 2 * n


def test_two_imports_in_the_same_moment_store_each_label_once(
    stand_ins: StandIns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two imports whose transactions overlap (the first pauses after reading the run's
    labels): the second waits for the first's lock, then finds every label there
    (PostgreSQL's READ COMMITTED alone would let both read none and both store all)."""
    review = repeating_run(stand_ins, tmp_path)
    made = [
        review.label_for("s1", v.metric, v.index, "right", "ann") for v in review.verdicts["s1"]
    ]
    read = threading.Event()
    stored: dict[str, list[Label]] = {}

    def first_import() -> None:
        store = LabelStore.open(review.db)
        real = store.current

        def paused(*args: Any) -> list[Label]:
            found = real(*args)
            read.set()
            time.sleep(1.0)  # the other import starts meanwhile
            return found

        monkeypatch.setattr(store, "current", paused)
        try:
            stored["first"] = store.add(review.run.id, made, only_changes=True)
        finally:
            store.close()

    # opened first: an SQLite file being written refuses to be opened for labelling
    second = LabelStore.open(review.db)
    first = threading.Thread(target=first_import)
    first.start()
    assert read.wait(30)
    try:
        stored["second"] = second.add(review.run.id, made, only_changes=True)
    finally:
        second.close()
    first.join(30)
    assert (len(stored["first"]), len(stored["second"])) == (len(made), 0)
    assert stored_rows() == len(made)


def test_labels_go_through_a_csv_file_and_back(stand_ins: StandIns, tmp_path: Path) -> None:
    first = repeating_run(stand_ins, tmp_path)
    label_alternately(first)
    exported = tmp_path / "labels.csv"
    result = run_cli("labels", "export", "latest", "-o", exported)
    assert result.exit_code == 0, result.output
    header, cells = exported.read_text("utf-8").splitlines()[0], rows_of_csv(exported)
    assert header == "sample_id,metric,verdict,text,label,label_kind,mark,reviewer,time,selection"
    # a score's verdict and text cells are empty, as is the empty chunk's text
    assert ["s1", "context_precision", "", "", "0.0"] in [row[:5] for row in cells]
    assert ["s1", "context_precision", "2", ""] in [row[:4] for row in cells]
    second = repeating_run(stand_ins, tmp_path, "--no-resume")
    result = run_cli("labels", "import", exported, "--run", "latest")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Imported {len(cells)} labels into run {second.run.id}; ")
    assert item_labels(second) == item_labels(first)


def rows_of_csv(path: Path) -> list[list[str]]:
    import csv

    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))[1:]


def test_a_hand_written_csv_file_is_read_as_numbers(stand_ins: StandIns, tmp_path: Path) -> None:
    review = repeating_run(stand_ins, tmp_path)
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "sample_id,metric,text,label\n"
        "s1,faithfulness,It costs 12 euros.,1\n"
        "s1,faithfulness,It costs 12 euros.,0\n"
        "s1,faithfulness,,1\n",
        "utf-8",
    )
    result = run_cli("labels", "import", labels, "--run", "latest", "--reviewer", "bo")
    assert (result.exit_code, result.stdout) == (
        0,
        f"Imported 3 labels into run {review.run.id}; 0 were there already, 0 matched no "
        "verdict or score of the run\n",
    )
    # rows without a number take the verdicts of their text in turn
    assert [x[:4] for x in item_labels(review)] == [
        ("faithfulness", 0, "It costs 12 euros.", 1.0),
        ("faithfulness", 1, "It costs 12 euros.", 0.0),
        ("faithfulness", None, "", 1.0),
    ]
    labels.write_text("sample_id,metric,label\ns1,faithfulness,yes\n", "utf-8")
    result = run_cli("labels", "import", labels, "--run", "latest")
    assert (result.exit_code, result.output) == (
        2,
        f"Error: {labels}, line 2, field 'label': must be a number in [0, 1], got 'yes'\n",
    )


def test_a_verdict_found_by_number_must_still_say_the_rows_text(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """A row whose number holds another text in this run (the sample changed) is matched by
    its text, and left out where the run has that text nowhere."""
    review = repeating_run(stand_ins, tmp_path)
    statement = next(v for v in review.verdicts["s1"] if v.metric == "faithfulness")
    labels = tmp_path / "labels.jsonl"
    moved = {"sample_id": "s1", "metric": "faithfulness", "label": 1, "reviewer": "ann"}
    written = [{**moved, "verdict": 7, "text": statement.text}]
    written.append({**moved, "verdict": 0, "text": "It costs 15 euros."})
    labels.write_text("".join(json.dumps(row) + "\n" for row in written), "utf-8")
    result = run_cli("labels", "import", labels, "--run", "latest")
    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        f"Imported 1 label into run {review.run.id}; 0 were there already, 1 matched no "
        "verdict or score of the run\n",
        "1 of the labels imported are of samples not said to be drawn at random: kept for "
        "calibrate, not counted for the mean corrected by labels (--random-sample says the "
        f"file's samples were)\nUnmatched rows of {labels} (lines): 2\n"
        # the sample's other statement has no label: the import says it is missing
        "faithfulness: 1 sample has verdicts still unlabelled, not counted for the mean "
        f"corrected by labels until each is complete: s1 (verdict 1) (`localeval review "
        f"{review.run.id}` marks them)\n",
    )
    assert [x[:4] for x in item_labels(review)] == [
        ("faithfulness", statement.index, statement.text, 1.0)
    ]


def test_calibrate_labels_never_writes_over_the_models_file(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    label_alternately(repeating_run(stand_ins, tmp_path))
    models = stand_ins.models
    before = models.read_bytes()
    for extra in ((), ("--models", str(models))):
        result = run_cli("calibrate", "--labels", "latest", *extra, "-o", models)
        assert (result.exit_code, result.output) == (
            2,
            f"Error: --output {models}: is the same file as the models file, {models}; "
            "refusing to overwrite it\n",
        )
        assert models.read_bytes() == before


def run_ids() -> list[str]:
    return [line.split()[0] for line in run_cli("runs", "list").stdout.splitlines()[1:]]


def test_a_labelled_run_is_deleted_only_when_asked(stand_ins: StandIns, tmp_path: Path) -> None:
    labelled = repeating_run(stand_ins, tmp_path)
    n = len(label_alternately(labelled))
    plain = repeating_run(stand_ins, tmp_path, "--no-resume").run.id
    newest = repeating_run(stand_ins, tmp_path, "--no-resume").run.id
    pruned = run_cli("runs", "prune", "--keep", "1", "--yes")
    assert pruned.exit_code == 0, pruned.output
    assert pruned.stderr == (
        f"Kept run {labelled.run.id}: it holds {n} labels of your team (--with-labels deletes "
        "it with them).\n"
    )
    assert run_ids() == [newest, labelled.run.id] and plain not in run_ids()
    refused = run_cli("runs", "delete", labelled.run.id, "--yes")
    assert (refused.exit_code, refused.stderr) == (
        2,
        f"Error: run {labelled.run.id} holds {n} labels of your team, which cannot be computed "
        f"again: `localeval labels export {labelled.run.id} -o labels.jsonl` keeps them in a "
        "file, and --with-labels deletes the run with them\n",
    )
    delete = ["runs", "delete", labelled.run.id, newest, "--with-labels"]
    asked = CliRunner().invoke(main, delete, input="n\n")
    assert asked.exit_code == 1
    assert (
        f"Delete these 2 runs with their samples, scores and the {n} labels your team made of "
        "them (labels cannot be computed again)? [y/N]: n\n"
    ) in asked.stdout
    assert stored_rows() == n
    pruned = run_cli("runs", "prune", "--keep", "1", "--with-labels", "--yes")
    assert pruned.exit_code == 0, pruned.output
    assert run_ids() == [newest] and stored_rows() == 0


def test_a_run_labelled_after_the_prompt_is_not_deleted(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """A reviewer labels the run while `runs delete` waits at its prompt: checked again as
    the runs are deleted, under the write lock."""
    review = repeating_run(stand_ins, tmp_path)
    store = open_history(review.db, writable=True)
    try:
        runs = runs_to_delete(store, [review.run.id])
        label_alternately(review)
        with pytest.raises(UsageError, match=f"run {review.run.id} holds 10 labels of your team"):
            delete_runs(store, runs)
    finally:
        store.close()
    assert run_ids() == [review.run.id] and stored_rows() == 10


@pytest.mark.parametrize("name", ["labels.jsonl.gz", "labels.CSV.gz"])
def test_labels_exported_to_a_gz_name_are_gzip_and_import_back(
    stand_ins: StandIns, tmp_path: Path, name: str
) -> None:
    """`-o NAME.gz` writes what the name says (it wrote plain text, which `labels import`,
    reading .gz as gzip, then refused), and the same labels give the same bytes."""
    first = repeating_run(stand_ins, tmp_path)
    label_alternately(first)
    exported = tmp_path / name
    assert run_cli("labels", "export", "latest", "-o", exported).exit_code == 0
    text = gzip.decompress(exported.read_bytes()).decode("utf-8")
    assert text.startswith("sample_id,metric,") == (".csv" in name.lower())
    again = tmp_path / f"again-{name}"
    run_cli("labels", "export", "latest", "-o", again)
    assert again.read_bytes() == exported.read_bytes()
    second = repeating_run(stand_ins, tmp_path, "--no-resume")
    result = run_cli("labels", "import", exported, "--run", "latest")
    assert result.exit_code == 0, result.output
    assert item_labels(second) == item_labels(first)


def test_a_verdict_labelled_twice_in_a_file_takes_the_later_row_by_text_or_number(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """One rule for a file that labels a verdict twice: the later row counts and the earlier
    is said to be left out for it, whether the rows find the verdict by text or by number."""
    review = repeating_run(stand_ins, tmp_path)
    said = [v for v in review.verdicts["s1"] if v.metric == "faithfulness"]
    text = "It costs 12 euros."
    assert [v.text for v in said] == [text, text]  # two verdicts of one text
    base = {"sample_id": "s1", "metric": "faithfulness", "reviewer": "ann"}
    by_text = [base | {"text": text, "label": value} for value in (1.0, 1.0, 0.0)]
    by_number = [base | {"verdict": said[0].index, "label": value} for value in (0.0, 1.0)]
    for name, file_rows, expected in (
        ("text", by_text, [1.0, 0.0]),  # the third row labels the second verdict again
        ("number", by_number, [1.0, 0.0]),  # the first verdict's later row counts
    ):
        labels = tmp_path / f"by-{name}.jsonl"
        labels.write_text("".join(json.dumps(r) + "\n" for r in file_rows), "utf-8")
        result = run_cli("labels", "import", labels, "--run", "latest")
        assert result.exit_code == 0, result.output
        assert f"Left out 1 row of {labels} for a later row of the same item and reviewer" in (
            result.output
        )
        assert "0 matched no verdict or score of the run" in result.output
        assert "Unmatched rows" not in result.output
        held = {x.verdict: x.label for x in stored_labels(review) if x.metric == "faithfulness"}
        assert [held.get(v.index) for v in said] == expected, name
