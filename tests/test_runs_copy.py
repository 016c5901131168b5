"""`localeval runs copy`: runs move between a laptop's SQLite file and a team's PostgreSQL
database with their samples, scores, evidence and labels; a copy is all or none, copying
again changes nothing, and a run the target holds with other content is never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_runs import demo_copy, evaluate, run_cli
from run_db import as_setting, column_names, query, write
from standins import StandIns

from localeval.database import Location, open_store
from localeval.history.copying import (
    LABEL_FIELDS,
    RUN_FIELDS,
    SAMPLE_FIELDS,
    SCORE_FIELDS,
    UNDONE_FIELDS,
)
from localeval.labels.review_items import load_review_run
from localeval.labels.store import LabelStore


def fields(text: str) -> set[str]:
    return {name.strip() for name in text.split(",")}


def test_a_copy_takes_every_column_a_run_has(tmp_path: Path) -> None:
    """A migration that adds a column to a run's tables must add it to what is copied."""
    db = open_store(tmp_path / "schema.db")
    assert set(column_names(db, "runs")) - {"owner", "heartbeat"} == fields(RUN_FIELDS)
    assert set(column_names(db, "run_samples")) == fields(SAMPLE_FIELDS)
    assert set(column_names(db, "run_scores")) == fields(SCORE_FIELDS)
    assert set(column_names(db, "run_labels")) - {"id"} == fields(LABEL_FIELDS)
    assert set(column_names(db, "run_labels_undone")) == fields(UNDONE_FIELDS)
    db.close()


def label(db: Location, run: str, reviewer: str, count: int) -> None:
    """`count` labels by `reviewer` of the run's verdicts, kept in `db`."""
    review = load_review_run(run, db)
    verdicts = [(s, v) for s in review.verdicts for v in review.verdicts[s]]
    store = LabelStore.open(db)
    made = [
        review.label_for(sample, v.metric, v.index, "wrong", reviewer)
        for sample, v in verdicts[:count]
    ]
    store.add(review.run.id, made)
    store.close()


def results(db: Location, run: str, out: Path) -> str:
    shown = run_cli("runs", "show", run, "--db", as_setting(db), "-o", out)
    assert shown.exit_code == 0, shown.output
    return out.read_text(encoding="utf-8")


def counts(db: Location) -> list[int]:
    tables = ("runs", "run_samples", "run_scores", "run_labels")
    return [query(db, f"SELECT count(*) FROM {table}")[0][0] for table in tables]


@pytest.mark.postgres
def test_runs_travel_between_a_file_and_a_server_and_back(
    stand_ins: StandIns, tmp_path: Path, postgres_database: Location
) -> None:
    laptop, server, back = tmp_path / "laptop.db", as_setting(postgres_database), tmp_path / "b.db"
    data = demo_copy(tmp_path)
    first = evaluate(stand_ins, data, "--db", laptop)
    second = evaluate(stand_ins, data, "--db", laptop, "-m", "faithfulness")
    label(laptop, first, "ann", 3)

    pushed = run_cli("runs", "copy", first, "latest", "--from", laptop, "--to", server)
    assert (pushed.exit_code, pushed.stdout) == (
        0,
        f"Copied run {first} to {server}\nCopied run {second} to {server}\n",
    )
    assert results(postgres_database, first, tmp_path / "s.json") == results(
        laptop, first, tmp_path / "l.json"
    )
    assert counts(postgres_database) == counts(laptop)
    assert (
        query(postgres_database, "SELECT reviewer, mark FROM run_labels") == [("ann", "wrong")] * 3
    )

    again = run_cli("runs", "copy", first, "--from", laptop, "--to", server)
    assert again.stdout == f"Run {first} is in {server} already, with the same content\n"
    assert counts(postgres_database) == counts(laptop)
    label(laptop, first, "bob", 1)  # a label made on the laptop since
    label(postgres_database, first, "carl", 1)  # and one on the server
    added = run_cli("runs", "copy", first, "--from", laptop, "--to", server)
    assert added.stdout.endswith("Added 1 labels made since the last copy\n")
    assert sorted(query(postgres_database, "SELECT DISTINCT reviewer FROM run_labels")) == [
        ("ann",),
        ("bob",),
        ("carl",),
    ]

    pulled = run_cli("runs", "copy", first, "--from", server, "--to", back)
    assert pulled.exit_code == 0, pulled.output
    assert results(back, first, tmp_path / "b.json") == results(laptop, first, tmp_path / "l2.json")


def test_a_run_held_with_other_content_is_refused_and_nothing_is_copied(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    data = demo_copy(tmp_path)
    first = evaluate(stand_ins, data, "--db", source, "-m", "faithfulness")
    assert run_cli("runs", "copy", first, "--from", source, "--to", target).exit_code == 0
    write(target, "UPDATE run_scores SET score = 0.5 WHERE run_id = ?", (first,))
    second = evaluate(stand_ins, data, "--db", source, "-m", "bleu")
    before = counts(target)
    refused = run_cli("runs", "copy", second, first, "--from", source, "--to", target)
    assert (refused.exit_code, refused.stderr) == (
        2,
        f"Error: run {first} is in {target} already, with other content; it is left as it is, "
        "and nothing was copied\n",
    )
    assert counts(target) == before  # not even the new run
    assert query(target, "SELECT DISTINCT score FROM run_scores") == [(0.5,)]


def test_what_cannot_be_copied_is_said(stand_ins: StandIns, tmp_path: Path) -> None:
    source = tmp_path / "a.db"
    data = demo_copy(tmp_path)
    run = evaluate(stand_ins, data, "--db", source, "-m", "bleu")
    write(source, "UPDATE runs SET finished = NULL WHERE id = ?", (run,))
    incomplete = run_cli("runs", "copy", run, "--from", source, "--to", tmp_path / "b.db")
    assert incomplete.stderr == (
        f"Error: run {run} is not complete (incomplete (8/8)); only complete runs are copied: "
        "finish it first (re-run its command)\n"
    )
    typo = run_cli("runs", "copy", "nope", "--from", source, "--to", tmp_path / "b.db")
    assert typo.exit_code == 2 and "no run 'nope'" in typo.stderr
    assert not (tmp_path / "b.db").exists()
    same = run_cli("runs", "copy", run, "--from", source, "--to", source)
    assert same.exit_code == 2 and "--from and --to name the same database" in same.stderr
