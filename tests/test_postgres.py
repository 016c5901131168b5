"""A team's PostgreSQL database as the store, against a real server: what goes wrong is said
in one line that names the URL without its password, and nothing is written; a password
is never written anywhere; machines share runs, the cache and shards; a lease is the
server's to hold; a server gone mid-run leaves a run that another machine finishes with the
results of a run never interrupted. (The store's own tests run on both stores: test_store,
test_history, test_history_cli, test_cache, test_review, test_shards, test_processes,
test_kill_resume.)"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from pg_server import PASSWORD, READER, READER_PASSWORD, USER, PostgresServer, free_port
from run_db import query, write
from server_fakes import FakeServer, models_toml
from test_history import run_in_memory, samples, store_run
from test_processes import environment, localeval, wait_for_samples, write_data

from localeval.cli import main
from localeval.database import Location, ServerUrl
from localeval.errors import RunInUseError
from localeval.history.lease import STALE_AFTER_S
from localeval.history.store import RunStore
from localeval.labels.store import Label, LabelStore

pytestmark = pytest.mark.postgres

ADVICE = "give the password through PGPASSWORD, ~/.pgpass or a PGSERVICE service file instead"


def run(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def tables_of(server: PostgresServer, url: ServerUrl, schema: str = "public") -> set[str]:
    """The tables of a schema of the database, as its superuser sees them."""
    name = url.url.rsplit("/", 1)[1].split("?")[0]
    sql = "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = %s"
    return {row[0] for row in server.admin(sql, (schema,), dbname=name)}


# --- what cannot be used is said, and nothing is written ----------------------------------


@pytest.mark.parametrize("command", [["runs", "list"], ["evaluate", "d.jsonl", "-m", "bleu"]])
def test_a_password_on_the_command_line_is_refused(command: list[str]) -> None:
    result = run(*command, "--db", "postgresql://ann:hunter2@db.example:5432/evals")
    assert result.exit_code == 2
    assert "hunter2" not in result.output
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--db': postgresql://ann@db.example:5432/evals: holds a "
        f"password, which every user of this machine can read on a command line; {ADVICE} "
        "(docs/team.md)"
    )


def test_an_unreachable_server_is_one_line() -> None:
    url = f"postgresql://{USER}@127.0.0.1:{free_port()}/evals"
    for command in (["runs", "list"], ["evaluate", "examples/demo.jsonl", "-m", "bleu"]):
        result = run(*command, "--db", url)
        assert result.exit_code == 2, result.output
        assert re.fullmatch(
            rf"Error: database {re.escape(url)}: cannot connect \(connection to server at "
            r'"127.0.0.1", port \d+ failed: Connection refused\)\n',
            result.stderr,
        ), result.stderr


def test_a_wrong_password_is_refused_without_showing_it(
    postgres_server: PostgresServer, postgres_database: ServerUrl, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", "not-the-password")
    result = run("evaluate", "examples/demo.jsonl", "-m", "bleu", "--db", postgres_database.url)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: database {postgres_database}: the server refused the login (a wrong "
        f"password, or no such role); {ADVICE} (docs/team.md)\n"
    )
    assert "not-the-password" not in result.output
    assert tables_of(postgres_server, postgres_database) == set()


def reader_url(server: PostgresServer, database: ServerUrl) -> str:
    """The database as the `reader` role, its password in the password file too."""
    with server.passfile.open("a") as passfile:
        passfile.write(f"127.0.0.1:{server.port}:*:{READER}:{READER_PASSWORD}\n")
    return database.url.replace(f"//{USER}@", f"//{READER}@")


def test_a_role_that_may_not_create_tables_is_told_and_nothing_is_written(
    postgres_server: PostgresServer, postgres_database: ServerUrl
) -> None:
    url = reader_url(postgres_server, postgres_database)
    result = run("evaluate", "examples/demo.jsonl", "-m", "bleu", "--db", url)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: database {url}: this role may not create or change localeval's tables "
        "(permission denied for schema public); nothing was written. Its owner grants the "
        "rights once (docs/team.md)\n"
    )
    assert tables_of(postgres_server, postgres_database) == set()


def test_a_role_that_may_only_read_reads_an_up_to_date_database(
    postgres_server: PostgresServer, postgres_database: ServerUrl, tmp_path: Path
) -> None:
    """docs/team.md's read-only role: SELECT on the tables, nothing else."""
    data = write_data(tmp_path / "d.jsonl", 3)
    assert run("evaluate", data, "-m", "bleu", "--db", postgres_database.url).exit_code == 0
    name = postgres_database.url.rsplit("/", 1)[1]
    postgres_server.admin(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {READER}", dbname=name)
    url = reader_url(postgres_server, postgres_database)
    listed = run("runs", "list", "--db", url)
    assert listed.exit_code == 0 and " complete " in listed.stdout, listed.output
    assert run("runs", "show", "latest", "--db", url).exit_code == 0
    refused = run("evaluate", data, "-m", "bleu", "--db", url, "--no-resume")
    assert refused.exit_code == 2
    assert refused.stderr.splitlines()[-1] == (
        f"Error: database {url}: permission denied for table runs while starting a run. Runs "
        "stored so far are intact; fix the cause, or use --db URL to put the database elsewhere"
    )


def test_a_server_older_than_supported_is_refused(
    postgres_server: PostgresServer, postgres_database: ServerUrl, monkeypatch: pytest.MonkeyPatch
) -> None:
    from localeval.database import postgres

    monkeypatch.setattr(postgres, "MIN_SERVER_VERSION", 990000)
    result = run("runs", "list", "--db", postgres_database.url)
    assert result.exit_code == 2
    assert re.fullmatch(
        rf"Error: database {re.escape(str(postgres_database))}: PostgreSQL 1\d(\.\d+)? is older "
        r"than localeval supports \(99 or newer\); nothing was written\n",
        result.stderr,
    ), result.stderr
    assert tables_of(postgres_server, postgres_database) == set()


def test_a_schema_holding_other_tables_is_left_alone(
    postgres_server: PostgresServer, postgres_database: ServerUrl
) -> None:
    name = postgres_database.url.rsplit("/", 1)[1]
    postgres_server.admin("CREATE TABLE customers (name TEXT)", dbname=name)
    result = run("evaluate", "examples/demo.jsonl", "-m", "bleu", "--db", postgres_database.url)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: database {postgres_database}: not a localeval database (its schema holds other "
        "tables: customers); it is left as it is. Give another --db, or a schema of localeval's "
        "own (?options=-csearch_path%3Dlocaleval, docs/team.md)\n"
    )
    assert tables_of(postgres_server, postgres_database) == {"customers"}
    # a schema of its own, as the message says
    postgres_server.admin(f"CREATE SCHEMA localeval AUTHORIZATION {USER}", dbname=name)
    own = postgres_database.url + "?options=-csearch_path%3Dlocaleval"
    assert run("runs", "list", "--db", own).stdout.startswith("No runs yet: ")
    assert run("evaluate", "examples/demo.jsonl", "-m", "bleu", "--db", own).exit_code == 0
    assert tables_of(postgres_server, postgres_database) == {"customers"}
    assert len(query(ServerUrl(own), "SELECT id FROM runs")) == 1


def test_a_database_that_does_not_exist_is_said(postgres_database: ServerUrl) -> None:
    url = postgres_database.url.rsplit("/", 1)[0] + "/nope"
    result = run("runs", "list", "--db", url)
    assert (result.exit_code, result.stderr) == (
        2,
        f'Error: database {url}: database "nope" does not exist; create it first (createdb, '
        "or CREATE DATABASE: docs/team.md)\n",
    )


# --- a password is never written ------------------------------------------------------------


def test_a_password_in_the_environment_is_never_written_anywhere(
    postgres_database: ServerUrl, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$LOCALEVAL_DB may hold the password (the environment is the user's own); no output,
    file, record or message says it."""
    secret_url = postgres_database.url.replace(f"//{USER}@", f"//{USER}:{PASSWORD}@")
    monkeypatch.delenv("PGPASSFILE")
    monkeypatch.setenv("LOCALEVAL_DB", secret_url)
    models = tmp_path / "fake.toml"
    models.write_text('[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n')
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    data = write_data(tmp_path / "d.jsonl", 4)
    said = [
        run("evaluate", data, "-o", tmp_path / "r.json"),
        run("evaluate", data, "--no-resume", "-m", "faithfulness"),
        run("runs", "list"),
        run("runs", "show", "latest", "-o", tmp_path / "s.json"),
        run("diff", "latest~1", "latest", "-o", tmp_path / "diff.json"),
        run("report", "latest", "-f", "html", "-o", tmp_path / "r.html"),
        run("report", "latest", "-f", "md", "-o", tmp_path / "r.md"),
        run("cache", "stats"),
        run("runs", "show", "nope"),
        run("runs", "copy", "latest", "--to", tmp_path / "copy.db"),
    ]
    assert [r.exit_code for r in said] == [1, 1, 0, 0, 0, 0, 0, 0, 2, 0], [r.output for r in said]
    assert said[7].stdout.startswith(f"database: {postgres_database}\n")
    monkeypatch.setenv("LOCALEVAL_DB", secret_url.rsplit("/", 1)[0] + "/nope")
    said.append(run("runs", "list"))
    assert said[-1].exit_code == 2 and f"//{USER}@127.0.0.1" in said[-1].stderr
    texts = [r.output for r in said]
    texts += [path.read_text(errors="replace") for path in tmp_path.iterdir() if path.is_file()]
    for table, columns in {
        "runs": "id, dataset_path, metrics, metric_settings, judge_extra, embedder_extra, owner",
        "run_samples": "inputs",
        "run_scores": "details",
        "judge_cache": "value",
    }.items():
        texts += [
            str(row) for row in query(ServerUrl(secret_url), f"SELECT {columns} FROM {table}")
        ]
    assert not [text for text in texts if PASSWORD in text]


# --- leases on a server ---------------------------------------------------------------------


def started_run(db: Location) -> tuple[RunStore, str]:
    """A store that started a run and stored one of its two samples."""
    store = RunStore.open(db)
    run = run_in_memory(samples(2))
    stored = store_run(store, run, complete=False)
    write(db, "DELETE FROM run_samples WHERE run_id = ? AND sample_id = 's1'", (stored.id,))
    return store, stored.id


def as_if_on_another_host(db: Location, run_id: str, heartbeat_age: float) -> None:
    owner = json.loads(query(db, "SELECT owner FROM runs WHERE id = ?", (run_id,))[0][0])
    owner["host"] = "another-host"
    write(
        db,
        "UPDATE runs SET owner = ?, heartbeat = ? WHERE id = ?",
        (json.dumps(owner), time.time() - heartbeat_age, run_id),
    )


def test_a_writer_on_another_machine_holds_its_run_until_its_connection_ends(
    postgres_database: ServerUrl,
) -> None:
    """No heartbeat's age is waited for: the server says when the writer is gone."""
    writer, run_id = started_run(postgres_database)
    as_if_on_another_host(postgres_database, run_id, heartbeat_age=STALE_AFTER_S * 2)
    other = RunStore.open(postgres_database)
    with pytest.raises(RunInUseError) as busy:
        other.claim(run_id)  # an old heartbeat, but its connection is alive
    assert "on another-host" in str(busy.value)
    writer.close()  # the machine went away: its connection with it
    started = time.monotonic()
    while other.connection.lease_held_elsewhere(run_id):  # the server ends it in a moment
        assert time.monotonic() - started < 10
        time.sleep(0.05)
    claimed = other.claim(run_id)
    assert claimed is not None and claimed.owner == other.owner
    other.close()


def test_on_a_file_a_writer_on_another_host_is_judged_by_its_heartbeat(tmp_path: Path) -> None:
    """A file on a shared disk: no server to ask, no pid to check across machines."""
    db = tmp_path / "shared.db"
    writer, run_id = started_run(db)
    writer.close()
    as_if_on_another_host(db, run_id, heartbeat_age=60)
    other = RunStore.open(db)
    with pytest.raises(RunInUseError):
        other.claim(run_id)
    as_if_on_another_host(db, run_id, heartbeat_age=STALE_AFTER_S + 1)
    assert other.claim(run_id) is not None
    other.close()


# --- machines sharing one database ------------------------------------------------------------


def machine(
    tmp_path: Path, name: str, db: Location, models: Path | None = None, delay: float = 0.0
) -> dict[str, Any]:
    """A process of its own with an empty local state: its own folder and home; the fake
    judge (slowed by `delay`), or the judge of `models`."""
    home = tmp_path / name
    home.mkdir()
    env = environment(home, db, delay) | {"HOME": str(home)}
    if models is not None:
        env["LOCALEVAL_MODELS"] = str(models)
    return {"env": env, "cwd": home}


def usage(results: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(results.read_text())
    return data["run"]["usage"]


def comparable(results: Path) -> dict[str, Any]:
    data = json.loads(results.read_text())
    for key in ("id", "created", "usage"):
        del data["run"][key]
    return data


def test_two_machines_share_runs_the_cache_and_shards(
    postgres_database: ServerUrl, tmp_path: Path
) -> None:
    """Machines asking one judge server (a recorded fake, samples in flight) and keeping
    their runs and cache in one database."""
    data = write_data(tmp_path / "d.jsonl", 30)
    with FakeServer() as fake:
        fake.delay_s = 0.005
        toml = tmp_path / "server.toml"
        toml.write_text(models_toml(fake.url, concurrency=3), encoding="utf-8")
        a, b, c = (machine(tmp_path, n, postgres_database, toml) for n in ("a", "b", "c"))
        # the same samples on two machines at once: two runs, every verdict stored once
        outs = [tmp_path / "a.json", tmp_path / "b.json"]
        both = [
            subprocess.Popen(localeval("evaluate", data, "--no-progress", "-o", out), **m)
            for m, out in zip((a, b), outs, strict=True)
        ]
        assert [p.wait(timeout=300) for p in both] == [1, 1]
        assert comparable(outs[0]) == comparable(outs[1])
        asked = len(fake.completions())
        # (window checks are kept too, but asked of the server's tokenizer)
        verdicts = "SELECT count(*), count(DISTINCT key) FROM judge_cache WHERE kind <> 'fits'"
        ((stored, distinct),) = query(postgres_database, verdicts)
        assert 0 < stored == distinct <= asked
        # a third machine, its local state empty: every verdict from the cache
        fake.requests.clear()
        warm = tmp_path / "c.json"
        done = subprocess.run(
            localeval("evaluate", data, "--no-progress", "--no-resume", "-o", warm), **c
        )
        assert done.returncode == 1
        assert fake.completions() == [] and usage(warm)["judge_calls"] == 0
        assert comparable(warm) == comparable(outs[0])
        # shards from two machines, merged by a third: no file moves
        shards = [
            subprocess.Popen(
                localeval("evaluate", data, "--no-progress", "--shard", f"{k}/2", "-o", out), **m
            )
            for k, m, out in ((1, a, tmp_path / "s1.json"), (2, b, tmp_path / "s2.json"))
        ]
        assert [p.wait(timeout=300) for p in shards] == [1, 1]
    ids = [json.loads((tmp_path / f"s{k}.json").read_text())["run"]["id"] for k in (1, 2)]
    merged = subprocess.run(
        localeval("runs", "merge", *ids, "-o", tmp_path / "m.json"),
        **c,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert merged.returncode == 1, merged.stderr
    whole, joined = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "m.json"))
    for key in ("summary", "summary_by_category", "gates", "samples"):
        assert joined[key] == whole[key], key


def test_a_server_gone_mid_run_leaves_a_run_another_machine_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stopped as by a crash (pg_ctl stop -m immediate) while a run stores its
    samples: the run stops with a clear message, and once the server is back a process on
    another machine resumes it to the results of a run never interrupted."""
    server = PostgresServer().init().start()
    try:
        server.create_roles()
        url = ServerUrl(server.create_database("team"))
        for name, value in server.environment().items():  # for the polling below
            monkeypatch.setenv(name, value)
        data = write_data(tmp_path / "d.jsonl", 40)
        whole = tmp_path / "whole.json"
        solo = machine(tmp_path, "solo", tmp_path / "solo.db")
        assert subprocess.run(localeval("evaluate", data, "-o", whole), **solo).returncode == 1

        first = machine(tmp_path, "first", url, delay=0.02)
        process = subprocess.Popen(
            localeval("evaluate", data, "--no-progress", "-o", tmp_path / "first.json"),
            **first,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for_samples(url, 3, process)
        server.stop("immediate")
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 2, stderr
        assert re.fullmatch(
            rf"Error: database {re.escape(str(url))}: the connection to the server was lost "
            r"\([^\n]+\) while [a-z' ]+\. Runs stored so far are intact; when the server is "
            r"back, re-run the same command to continue \(from this machine or any other\)\n",
            stderr.splitlines(keepends=True)[-1],
        ), stderr

        server.start()
        second = machine(tmp_path, "second", url)
        out = tmp_path / "second.json"
        again = subprocess.run(
            localeval("evaluate", data, "--no-progress", "-o", out),
            **second,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 1, again.stderr
        assert "Resuming run " in again.stderr
        assert comparable(out) == comparable(whole)
    finally:
        server.remove()


# --- docs/team.md's set-up, as written there ------------------------------------------------


def team_md_sql() -> list[list[str]]:
    """The SQL blocks of docs/team.md's set-up, statement by statement."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "team.md").read_text()
    blocks = re.findall(r"```sql\n(.*?)```", text, re.DOTALL)
    return [[s.strip() for s in block.split(";") if s.strip()] for block in blocks]


def test_the_roles_of_docs_team_md_do_what_it_says(
    postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_superuser, as_owner = team_md_sql()
    for statement in as_superuser:
        postgres_server.admin(statement)
    passwords = {
        "evals_owner": "owner-secret",
        "evals_ci": "ci-secret",
        "evals_reader": "reader-secret",
    }
    passfile = tmp_path / "pgpass"
    passfile.write_text(
        "".join(f"127.0.0.1:{postgres_server.port}:evals:{r}:{p}\n" for r, p in passwords.items())
    )
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    url = {
        role: f"postgresql://{role}@127.0.0.1:{postgres_server.port}/evals" for role in passwords
    }
    owner = ServerUrl(url["evals_owner"])
    from localeval.database.postgres import connect

    connection = connect(owner)
    for statement in as_owner:
        connection.execute(statement)
    connection.close()
    data = write_data(tmp_path / "d.jsonl", 3)
    # the owner's first command makes the tables; then CI writes and the reader reads
    made = run("cache", "stats", "--db", url["evals_owner"])
    assert made.exit_code == 0, made.output
    for _ in range(2):
        evaluated = run("evaluate", data, "-m", "bleu", "--db", url["evals_ci"], "--no-resume")
        assert evaluated.exit_code == 0, evaluated.output
    ci = ServerUrl(url["evals_ci"])
    ((run_id,),) = query(ci, "SELECT id FROM runs ORDER BY rowid LIMIT 1")
    store = LabelStore.open(ci)
    store.add(run_id, [Label("s0", "bleu", None, "", 1.0, "ann")])
    store.close()
    copied = run("runs", "copy", "latest", "--from", url["evals_ci"], "--to", tmp_path / "l.db")
    assert copied.exit_code == 0, copied.output
    # a labelled run (its labels copied first), deleted with them as the CI role
    delete = ["runs", "delete", run_id, "--yes", "--db", url["evals_ci"]]
    assert run(*delete).exit_code == 2  # its labels are kept unless asked
    deleted = run(*delete, "--with-labels")
    assert deleted.exit_code == 0, deleted.output
    reader = url["evals_reader"]
    assert run("runs", "list", "--db", reader).stdout.count(" complete ") == 1
    assert run("report", "latest", "-f", "md", "--db", reader).exit_code == 0
    assert run("evaluate", data, "-m", "bleu", "--db", reader, "--no-resume").exit_code == 2


def test_the_server_probes_a_silent_client(postgres_database: ServerUrl) -> None:
    """A machine that vanishes without closing its connection (power, network) frees its
    leases once the server's keepalive probes go unanswered: localeval asks for probes
    after a minute of silence (over TCP; a socket needs none)."""
    settings = (
        "SELECT current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_count')"
    )
    assert query(postgres_database, settings) == [("60", "6")]
