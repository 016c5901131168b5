"""A real PostgreSQL server for the tests (and docs/measurements/team.md): Debian's
`postgresql` package (scripts/setup.sh installs it), initialised in a temporary folder and
started on 127.0.0.1 at a free port, stopped after. PostgreSQL refuses to run as root: as
root, its programs run as the `postgres` user the package makes.

Roles: `postgres` (superuser, over the server's socket folder, for the tests' set-up),
`localeval` (the tests' role: a password, read from a password file as ~/.pgpass would
be; owner of each test's database) and `reader` (may connect, may create nothing).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: where the server's programs are, when not found by themselves
BIN_ENV = "LOCALEVAL_PG_BIN"
USER, PASSWORD = "localeval", "s3cret-test-pw"
READER, READER_PASSWORD = "reader", "reader-pw"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_programs() -> Path:
    """The folder of initdb and pg_ctl; AssertionError saying how to get them otherwise."""
    candidates = [os.environ.get(BIN_ENV, "")]
    candidates += sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2])
    )[::-1]
    on_path = shutil.which("initdb")
    candidates += [str(Path(on_path).parent)] if on_path else []
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    raise AssertionError(
        "PostgreSQL's server programs (initdb, pg_ctl) were not found: the tests marked "
        "`postgres` run a real server. scripts/setup.sh installs Debian's `postgresql`; "
        f"elsewhere install PostgreSQL 13 or newer, or set {BIN_ENV} to its bin folder"
    )


class PostgresServer:
    """One server in a folder of its own; `start()` returns when it accepts connections."""

    def __init__(self, root: Path | None = None, port: int | None = None):
        self.bin = server_programs()
        self.root = root or Path(tempfile.mkdtemp(prefix="localeval-pg-"))
        self.data = self.root / "data"
        self.port = port or free_port()
        self.passfile = self.root / "pgpass"
        self._as_postgres = os.geteuid() == 0

    # --- running the server's programs -----------------------------------------------------

    def _run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(self.bin / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if check and result.returncode != 0:
            raise AssertionError(f"{program} failed: {result.stderr or result.stdout}")
        return result

    def init(self, durable: bool = False) -> PostgresServer:
        """initdb; `durable`: PostgreSQL's own settings for writing to disk (for measuring),
        else a test server's, which skip syncing."""
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self.root.chmod(0o755)
        password_file = self.root / "superuser-password"
        password_file.write_text("unused\n")
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth-local=trust",
            "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(self.port),
            "unix_socket_directories": f"'{self.root}'",
            "max_connections": "200",
        }
        if not durable:  # a test server: nothing to keep across a crash of the machine
            settings |= {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("".join(f"{k} = {v}\n" for k, v in settings.items()))
        self.passfile.write_text(f"127.0.0.1:{self.port}:*:{USER}:{PASSWORD}\n")
        self.passfile.chmod(0o600)
        return self

    def start(self) -> PostgresServer:
        log = self.root / "server.log"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(log), "-w", "-t", "60", "start")
        return self

    def stop(self, mode: str = "fast") -> None:
        """`mode` as pg_ctl's: fast (connections ended cleanly), immediate (as a crash)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    # --- what the tests use ------------------------------------------------------------------

    def admin(self, sql: str, params: Sequence[Any] = (), dbname: str = "postgres") -> list[Any]:
        """Run one statement as the superuser (autocommit); its rows, if any."""
        import psycopg

        with psycopg.connect(
            host=str(self.root), port=self.port, user="postgres", dbname=dbname, autocommit=True
        ) as connection:
            cursor = connection.execute(sql, tuple(params))
            return cursor.fetchall() if cursor.description else []

    def create_roles(self) -> None:
        self.admin(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'")
        self.admin(f"CREATE ROLE {READER} LOGIN PASSWORD '{READER_PASSWORD}'")

    def create_database(self, name: str, template: str = "template1") -> str:
        """A new database owned by `localeval`; its URL (no password: see `passfile`)."""
        self.admin(f"CREATE DATABASE {name} TEMPLATE {template} OWNER {USER}")
        return self.url(name)

    def url(self, name: str, user: str = USER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{name}"

    def environment(self) -> dict[str, str]:
        """What a process needs to log in as `localeval`: the password file, as ~/.pgpass."""
        return {"PGPASSFILE": str(self.passfile)}

    def wait_until_up(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self._run(
            "pg_isready", "-h", "127.0.0.1", "-p", str(self.port), check=False
        ).returncode:
            assert time.monotonic() < deadline, "the server did not come back"
            time.sleep(0.2)
