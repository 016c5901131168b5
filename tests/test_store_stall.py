"""A PostgreSQL server that stops answering (its backend stopped with SIGSTOP): the command
leaves it within the statement limit with one line, exit 2, and the run resumes; and the
statement watch alone, on a socket pair."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from pg_server import PostgresServer
from review_runs import run_cli
from run_db import database_name, query
from test_postgres import machine
from test_processes import localeval, wait_for_samples, write_data

from localeval.database import ServerUrl


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


@pytest.mark.parametrize(("setting", "limit"), [("", 60.0), ("2.5", 2.5), ("0", 0.0)])
def test_the_limit_is_the_environments(
    setting: str, limit: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    from localeval.database import stall

    monkeypatch.setenv("LOCALEVAL_DB_TIMEOUT", setting)
    assert stall.statement_limit() == limit


@pytest.mark.postgres
def test_a_limit_that_is_not_a_number_of_seconds_is_one_line(
    postgres_database: ServerUrl, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCALEVAL_DB_TIMEOUT", "1m")
    result = run_cli("runs", "list", "--db", postgres_database.url)
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: $LOCALEVAL_DB_TIMEOUT must be a number of seconds (0 for no limit), not '1m'\n",
    )
