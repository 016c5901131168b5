"""A team's store as a careful team uses it: a password never printed however the URL is
written, a connection string never taken for a file, a refused login said in words, the same
data rules on both stores, `runs copy` repeatable on any collation and carrying undos, a
foreign database refused by the reading commands, and a stalled server left within the
statement limit with a run that resumes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from pg_server import USER, PostgresServer
from review_runs import demo_copy, evaluate, run_cli
from run_db import as_setting, query
from standins import StandIns
from test_postgres import machine
from test_processes import localeval, wait_for_samples, write_data
from test_runs_copy import label

from localeval.database import Location, ServerUrl, parse_location, refuse_password
from localeval.errors import UsageError
from localeval.runs.labels import LabelStore

SECRET = "TopSecret"


def database_name(url: ServerUrl) -> str:
    return url.url.rsplit("/", 1)[1].split("?")[0]


# --- what a location is, as libpq reads it (no server needed) -------------------------------


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        (
            f"postgresql://qrole:12?{SECRET}@127.0.0.1:5432/qdb",
            "postgresql://qrole@127.0.0.1:5432/qdb",
        ),
        (f"postgresql://qrole:PW1#{SECRET}@db:5432/qdb", "postgresql://qrole@db:5432/qdb"),
        (f"host=db user=ci password={SECRET} dbname=evals", "postgresql://ci@db/evals"),
    ],
)
def test_a_password_with_unencoded_characters_is_never_shown(given: str, shown: str) -> None:
    url = parse_location(given, "$LOCALEVAL_DB")
    assert isinstance(url, ServerUrl) and url.password is not None and SECRET in url.password
    assert str(url) == shown and SECRET not in repr(url)
    with pytest.raises(UsageError) as refused:  # on a command line, as any password
        refuse_password(url)
    assert SECRET not in str(refused.value) and "holds a password" in str(refused.value)


@pytest.mark.parametrize(
    "given",
    [
        f"postgresql://qrole:1234/{SECRET}@db:5432/qdb",  # libpq: host qrole, database ...
        f"postgresql://qrole:{SECRET}@db:port/qdb",
        f"postgresql://qrole@db/qdb?{SECRET}=1",
        f"postgresq://qrole:{SECRET}@db/qdb",
        f"pgsql://qrole:{SECRET}@db/qdb",
        f"postgresql:/qrole:{SECRET}@db/qdb",
        f"hots=db user=ci password={SECRET} dbname=evals",  # a mistyped keyword
        f"host=db password='{SECRET} dbname=evals",  # an unterminated quote
    ],
)
def test_a_url_that_cannot_be_read_as_meant_is_refused_without_echoing_it(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as refused:
        parse_location(given, "$LOCALEVAL_DB")
    assert SECRET not in str(refused.value)
    monkeypatch.setenv("LOCALEVAL_DB", given)
    result = run_cli("runs", "list")
    assert result.exit_code == 2 and SECRET not in result.output
    assert result.stderr.startswith("Error: $LOCALEVAL_DB: ")
    assert list(tmp_path.iterdir()) == []  # no file named after it


def test_a_connection_string_on_the_command_line_is_never_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    given = f"host=db.invalid user=ci password={SECRET} dbname=evals"
    result = run_cli("runs", "list", "--db", given)
    assert result.exit_code == 2 and SECRET not in result.output
    assert "postgresql://ci@db.invalid/evals: holds a password" in result.stderr
    assert list(tmp_path.iterdir()) == []


# --- data no store could keep: refused before any model loads, on both stores ---------------


@pytest.mark.both_stores
@pytest.mark.parametrize(
    ("row", "field", "problem"),
    [
        ({"sample_id": "a\u0000b"}, "sample_id", "holds a NUL character"),
        ({"category": "k\u0000"}, "category", "holds a NUL character"),
        ({"sample_id": "x" * 4000}, "sample_id", "is 4,000 bytes long (UTF-8), more than"),
        ({"sample_id": "题" * 400}, "sample_id", "is 1,200 bytes long (UTF-8), more than"),
    ],
)
def test_data_no_store_could_keep_is_refused_before_anything_runs(
    row: dict[str, str], field: str, problem: str, db: Location, tmp_path: Path
) -> None:
    rows = [
        {"sample_id": f"s{i}", "question": "q?", "answer": "a", "reference_answer": "a"}
        for i in range(3)
    ]
    rows[1] |= row
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run_cli("evaluate", data, "-m", "bleu")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error: {data}, line 2, field '{field}': {problem}")
    assert run_cli("runs", "list").stdout.startswith("No runs yet")


def test_a_labels_file_with_a_nul_is_refused_by_line_and_field(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    run = evaluate(stand_ins, demo_copy(tmp_path), "-m", "faithfulness")
    labels = tmp_path / "labels.jsonl"
    row = {"sample_id": "billing-1", "metric": "faithfulness", "label": 1, "reviewer": "a\u0000b"}
    labels.write_text(json.dumps(row) + "\n", encoding="utf-8")
    result = run_cli("labels", "import", labels, "--run", run)
    assert result.exit_code == 2, result.output
    assert f"{labels}, line 1, field 'reviewer': holds a NUL character" in result.stderr


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


# --- a server's database, as the team's server holds it --------------------------------------


@pytest.mark.postgres
def test_a_password_libpq_reads_past_a_question_mark_is_never_printed(
    postgres_server: PostgresServer,
    postgres_database: ServerUrl,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    postgres_server.admin(f"CREATE ROLE qrole LOGIN PASSWORD '12?{SECRET}'")
    name = database_name(postgres_database)
    postgres_server.admin("GRANT ALL ON SCHEMA public TO qrole", dbname=name)
    url = f"postgresql://qrole:12?{SECRET}@127.0.0.1:{postgres_server.port}/{name}"
    monkeypatch.delenv("PGPASSFILE")
    monkeypatch.setenv("LOCALEVAL_DB", url)
    data = write_data(tmp_path / "d.jsonl", 2)
    said = [
        run_cli("evaluate", data, "-m", "bleu"),
        run_cli("runs", "list"),
        run_cli("cache", "stats"),
        run_cli("runs", "list", "--db", url),
    ]
    assert [r.exit_code for r in said] == [0, 0, 0, 2], [r.output for r in said]
    assert f"saved in postgresql://qrole@127.0.0.1:{postgres_server.port}/{name}" in said[0].output
    assert not [r.output for r in said if SECRET in r.output]


@pytest.mark.postgres
def test_a_connection_string_reaches_the_server(
    postgres_server: PostgresServer,
    postgres_database: ServerUrl,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    name = database_name(postgres_database)
    monkeypatch.setenv(
        "LOCALEVAL_DB", f"host=127.0.0.1 port={postgres_server.port} user={USER} dbname={name}"
    )
    data = write_data(tmp_path / "d.jsonl", 2)
    result = run_cli("evaluate", data, "-m", "bleu")
    assert result.exit_code == 0, result.output
    assert query(postgres_database, "SELECT count(*) FROM runs") == [(1,)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl"]


@pytest.mark.postgres
def test_a_refused_login_is_said_in_words_whatever_the_password(
    postgres_database: ServerUrl, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", "e")  # a letter of the server's own words
    result = run_cli("runs", "list", "--db", postgres_database.url)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: database {postgres_database}: the server refused the login (a wrong password, "
        "or no such role); give the password through PGPASSWORD, ~/.pgpass or a PGSERVICE "
        "service file instead (docs/team.md)\n",
    )


@pytest.mark.postgres
def test_the_reading_commands_refuse_a_database_that_is_not_localevals(
    postgres_server: PostgresServer, postgres_database: ServerUrl
) -> None:
    postgres_server.admin(
        "CREATE TABLE customers (name TEXT)", dbname=database_name(postgres_database)
    )
    for command in (["runs", "list"], ["runs", "show", "latest"]):
        result = run_cli(*command, "--db", postgres_database.url)
        assert (result.exit_code, result.stderr) == (
            2,
            f"Error: database {postgres_database}: not a localeval database (its schema holds "
            "other tables: customers); it is left as it is. Give another --db, or a schema of "
            "localeval's own (?options=-csearch_path%3Dlocaleval, docs/team.md)\n",
        ), result.output
        nowhere = postgres_database.url + "?options=-csearch_path%3Dnope"
        result = run_cli(*command, "--db", nowhere)
        assert result.exit_code == 2, result.output
        assert "no schema of its search_path exists" in result.stderr


@pytest.mark.postgres
def test_a_stalled_server_is_left_within_the_limit_and_the_run_resumes(
    postgres_server: PostgresServer, postgres_database: ServerUrl, tmp_path: Path
) -> None:
    """The server's backend process stopped (SIGSTOP): no statement is answered, nothing
    ends the connection. The run stops with one line, and resumes once the server is back."""
    data = write_data(tmp_path / "d.jsonl", 30)
    first = machine(tmp_path, "first", postgres_database, delay=0.05)
    first["env"] |= {"LOCALEVAL_DB_TIMEOUT": "2", "PGAPPNAME": "stalled-writer"}
    process = subprocess.Popen(
        localeval("evaluate", data, "--no-progress", "-o", tmp_path / "first.json"),
        **first,
        stderr=subprocess.PIPE,
        text=True,
    )
    stopped: list[int] = []
    try:
        wait_for_samples(postgres_database, 2, process)
        backends = postgres_server.admin(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = "
            "'stalled-writer'",
            (database_name(postgres_database),),
        )
        for (pid,) in backends:
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
        _, stderr = process.communicate(timeout=120)
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        if process.poll() is None:
            process.kill()
    assert process.returncode == 2, stderr
    assert re.fullmatch(
        rf"Error: database {re.escape(str(postgres_database))}: the connection to the server was "
        r"lost \(the server gave no answer in 2 s; \$LOCALEVAL_DB_TIMEOUT sets the limit\) "
        r"while [a-z' ]+\. Runs stored so far are intact; when the server is back, re-run the "
        r"same command to continue \(from this machine or any other\)\n",
        stderr.splitlines(keepends=True)[-1],
    ), stderr
    # the stopped backends, resumed, find their connections closed and end
    deadline = time.monotonic() + 60
    while postgres_server.admin("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (stopped,)):
        assert time.monotonic() < deadline, postgres_server.admin(
            "SELECT pid, state, wait_event, query, backend_type FROM pg_stat_activity "
            "WHERE pid = ANY(%s)",
            (stopped,),
        )
        time.sleep(0.05)
    again = subprocess.run(
        localeval("evaluate", data, "--no-progress", "-o", tmp_path / "again.json"),
        **machine(tmp_path, "again", postgres_database),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode in (0, 1), again.stderr
    assert "Resuming run " in again.stderr
    assert query(postgres_database, "SELECT count(*) FROM runs WHERE finished IS NOT NULL") == [
        (1,)
    ]


@pytest.mark.both_stores
def test_a_database_before_the_undo_table_gets_it_and_keeps_its_labels(db: Location) -> None:
    """Migration 12 (run_labels_undone) on a database just before it: its labels stay, and
    an undo is kept."""
    from run_db import database_at_version

    from localeval.database import MIGRATIONS

    version = next(i for i, sql in enumerate(MIGRATIONS) if "run_labels_undone" in sql)
    old = database_at_version(db, version)
    old.execute(
        "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, n_samples, "
        "prompt_version, metrics, metric_settings, thresholds, localeval_version) "
        "VALUES ('r', 't', 'f', 'd', 's', 2, '', '[\"bleu\"]', '{}', '{}', 'v')"
    )
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


def test_a_wait_past_the_limit_is_given_up_on_and_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The statement watch alone: a socket whose peer never answers is shut once the limit
    (and the grace) has passed, and the wait's failure is said as Stalled."""
    import socket

    from localeval.database import stall

    monkeypatch.setattr(stall, "CLIENT_GRACE_S", 0.0)
    ours, peer = socket.socketpair()
    try:
        given_up = pytest.raises(stall.Stalled, match=r"the server gave no answer in 0\.2 s")
        with given_up, stall.answered_within(ours.fileno(), 0.2):
            if not ours.recv(1):  # returns once the watch shuts the socket
                raise ConnectionError("closed")
        with stall.answered_within(ours.fileno(), 0.2):
            pass  # an answered statement is not given up on later
        assert stall._WATCH.end(ours.fileno()) is False
    finally:
        ours.close()
        peer.close()
