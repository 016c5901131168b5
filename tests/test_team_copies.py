"""`runs copy` as a team uses it: repeatable on a server of any collation, carrying a
reviewer's undo both ways (migration 12), advising its own options, refusing a device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pg_server import USER, PostgresServer
from review_runs import demo_copy, evaluate, run_cli
from run_db import as_setting, database_name, query
from standins import StandIns
from test_runs_copy import label

from localeval.database import Location, ServerUrl
from localeval.labels.store import LabelStore

# --- runs copy ------------------------------------------------------------------------------


def test_runs_copy_advises_its_own_options_and_refuses_a_device(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    source = tmp_path / "a.db"
    run = evaluate(stand_ins, demo_copy(tmp_path), "--db", source, "-m", "bleu")
    foreign = tmp_path / "other.db"
    import sqlite3

    with sqlite3.connect(foreign) as other:
        other.execute("CREATE TABLE customers (name TEXT)")
    refused = run_cli("runs", "copy", run, "--from", source, "--to", foreign)
    assert refused.exit_code == 2
    assert refused.stderr.endswith("Give another --to\n") and "--db" not in refused.stderr
    missing = run_cli("runs", "copy", run, "--from", tmp_path / "none.db", "--to", foreign)
    assert missing.exit_code == 2
    assert "(or give --from / set LOCALEVAL_DB)" in missing.stderr, missing.stderr
    journal = Path("/dev/null-journal")
    had_journal = journal.exists()
    device = run_cli("runs", "copy", run, "--from", source, "--to", "/dev/null")
    assert (device.exit_code, device.stderr) == (
        2,
        "Error: database /dev/null: is a device, FIFO or socket, not a database file; give a "
        "file's path\n",
    )
    assert journal.exists() == had_journal


@pytest.mark.postgres
def test_runs_copy_repeats_on_a_database_of_another_collation(
    stand_ins: StandIns,
    tmp_path: Path,
    postgres_server: PostgresServer,
    postgres_database: ServerUrl,
) -> None:
    """Sample ids that en-US orders otherwise than C (and SQLite) do."""
    postgres_server.admin(
        f"CREATE DATABASE icu_{database_name(postgres_database)} TEMPLATE template0 "
        f"LOCALE_PROVIDER icu ICU_LOCALE 'en-US' OWNER {USER}"
    )
    server = postgres_database.url.rsplit("/", 1)[0] + f"/icu_{database_name(postgres_database)}"
    rows = [
        {"sample_id": sid, "question": "q?", "answer": "a b", "reference_answer": "a"}
        for sid in ("a", "B", "_c", "b")
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    laptop = tmp_path / "laptop.db"
    run = evaluate(stand_ins, data, "--db", laptop, "-m", "bleu", "-m", "rouge_l")
    first = run_cli("runs", "copy", run, "--from", laptop, "--to", server)
    assert first.exit_code == 0, first.output
    again = run_cli("runs", "copy", run, "--from", laptop, "--to", server)
    assert (again.exit_code, again.stdout) == (
        0,
        f"Run {run} is in {ServerUrl(server)} already, with the same content\n",
    ), again.output


@pytest.mark.postgres
def test_an_undo_travels_with_copies(
    stand_ins: StandIns, tmp_path: Path, postgres_database: ServerUrl
) -> None:
    laptop, server = tmp_path / "laptop.db", as_setting(postgres_database)
    run = evaluate(stand_ins, demo_copy(tmp_path), "--db", laptop, "-m", "faithfulness")
    assert run_cli("runs", "copy", run, "--from", laptop, "--to", server).exit_code == 0
    label(postgres_database, run, "ann", 2)
    assert run_cli("runs", "copy", run, "--from", server, "--to", laptop).exit_code == 0
    store = LabelStore.open(postgres_database)
    store.undo(run, "ann")
    store.close()
    count = "SELECT count(*) FROM run_labels"
    back = run_cli("runs", "copy", run, "--from", laptop, "--to", server)
    assert back.exit_code == 0 and "Added" not in back.stdout, back.output
    assert query(postgres_database, count) == [(1,)]
    down = run_cli("runs", "copy", run, "--from", server, "--to", laptop)
    assert down.stdout.endswith("Undid 1 labels undone since the last copy\n"), down.output
    assert query(laptop, count) == [(1,)]
    again = run_cli("runs", "copy", run, "--from", laptop, "--to", server)
    assert again.stdout == f"Run {run} is in {postgres_database} already, with the same content\n"
    assert query(postgres_database, count) == [(1,)]


@pytest.mark.both_stores
def test_a_database_before_the_undo_table_gets_it_and_keeps_its_labels(db: Location) -> None:
    """Migration 12 (run_labels_undone) on a database just before it: its labels stay, and
    an undo is kept."""
    from run_db import add_old_run, database_before

    old = database_before(db, "run_labels_undone")
    add_old_run(old)
    old.execute(
        "INSERT INTO run_labels (run_id, sample_id, metric, verdict, text, mark, label, "
        "reviewer, created, source) VALUES ('r', 's', 'bleu', NULL, '', 'right', 1, 'ann', "
        "'t', 'review')"
    )
    old.close()
    store = LabelStore.open(db)
    undone = store.undo("r", "ann")
    store.close()
    assert undone is not None and undone.reviewer == "ann"
    assert query(db, "SELECT reviewer, label FROM run_labels_undone") == [("ann", 1.0)]
    assert query(db, "SELECT count(*) FROM run_labels") == [(0,)]
