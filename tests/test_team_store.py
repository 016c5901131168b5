"""A team's store as a careful team uses it: a password never printed however the URL is
written, a connection string never taken for a file, a refused login said in words, the same
data rules on both stores, and a foreign database refused by the reading commands (copies:
test_team_copies.py; a stalled server: test_store_stall.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pg_server import USER, PostgresServer
from review_runs import demo_copy, evaluate, run_cli
from run_db import database_name, query
from standins import StandIns
from test_processes import write_data

from localeval.database import Location, ServerUrl, parse_location, refuse_password
from localeval.errors import UsageError

SECRET = "TopSecret"


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
