"""Where the run history and the cache are: an SQLite file (a `Path`, the default) or a
PostgreSQL database named by a libpq URL or connection string (`ServerUrl`).

Both server forms are read by libpq's own parser (psycopg's conninfo functions), never by
`urllib`, whose idea of where a URL's user part ends (at `/ ? #`) differs from libpq's:
what libpq reads as the password is what is kept out of print. A database prints as the
URL libpq's reading rebuilds, without its password, wherever it is printed (`str`, `repr`,
messages, run records); text that cannot be read so is refused without being echoed, and
what only looks like a URL (another scheme) is refused rather than taken for a file.
`--db` refuses a password in any form, since a command line is visible to every user of
the machine (`ps`); libpq's own ways (PGPASSWORD, ~/.pgpass, a PGSERVICE service file)
give it instead.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from localeval.errors import UsageError, param

DB_ENV = "LOCALEVAL_DB"
DEFAULT_DB = Path(".localeval") / "localeval.db"
SCHEMES = ("postgresql", "postgres")

#: where a command line's password should come from instead
PASSWORD_ADVICE = (
    "give the password through PGPASSWORD, ~/.pgpass or a PGSERVICE service file instead "
    "(docs/team.md)"
)


@dataclass(frozen=True)
class ServerUrl:
    """A PostgreSQL database: a URL, `postgresql://USER@HOST:PORT/DBNAME[?sslmode=...]`, or
    a libpq connection string, `host=HOST user=USER dbname=DBNAME`, as libpq reads it."""

    url: str = field(repr=False)

    def __str__(self) -> str:
        return redacted(self.url)

    def __repr__(self) -> str:
        return f"ServerUrl({redacted(self.url)!r})"

    @property
    def settings(self) -> dict[str, str]:
        """libpq's reading of it (its own parser): keyword to value, the password included."""
        from psycopg import conninfo

        return dict(conninfo.conninfo_to_dict(self.url))

    @property
    def password(self) -> str | None:
        """The password it holds itself (from $LOCALEVAL_DB), if any."""
        return self.settings.get("password") or None


#: an SQLite file or a PostgreSQL database
Location = Path | ServerUrl

#: what starts a URL: a scheme of two letters or more (not a Windows drive) and ":/"
_URL_START = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/")
#: what starts a libpq connection string: a keyword and "="
_CONNINFO_START = re.compile(r"\s*([a-z_]+)\s*=")
#: two `word=` settings apart: a connection string, even with a mistyped keyword
_SETTINGS = re.compile(r"\s*\w+\s*=\S*\s+\w+\s*=")
#: why a URL libpq reads cannot be the one meant (nothing of it is echoed: it may be a password)
_ENCODE_ADVICE = (
    "percent-encode each @ : / ? # % in the user name or password (%40 %3A %2F %3F %23 %25), "
    "or give the password through PGPASSWORD or ~/.pgpass (docs/reference.md)"
)
_CONNINFO_ADVICE = (
    "it is keyword=value settings with libpq's keywords (host, port, user, dbname, ...), a "
    "value holding spaces or quotes in single quotes (docs/reference.md)"
)


def is_server_url(text: str) -> bool:
    """Whether `text` names a PostgreSQL database (a URL of a known scheme or a libpq
    connection string), not a file."""
    start = _URL_START.match(text)
    if start:
        return start.group(1).lower() in SCHEMES and text[start.end() :].startswith("/")
    keyword = _CONNINFO_START.match(text)
    if keyword is not None and keyword.group(1) in _libpq_keywords():
        return True
    return _SETTINGS.match(text) is not None


@functools.cache
def _libpq_keywords() -> frozenset[str]:
    from psycopg import pq

    return frozenset(option.keyword.decode() for option in pq.Conninfo.get_defaults())


def parse_location(text: str, where: str = "") -> Location:
    """A `--db` or $LOCALEVAL_DB value (`where`, for a message): a PostgreSQL URL or libpq
    connection string (read by libpq's own parser), else a file path. What looks like a URL
    of another scheme is refused, never taken for a file; a URL that cannot be read is never
    echoed (its password could be anywhere in it)."""
    said = f"{where}: " if where else ""
    if not text.strip():  # "" would open the current folder, " " a file named by a space
        raise UsageError(f"{said}empty; give a file path or a postgresql:// URL")
    start = _URL_START.match(text)
    if start and not is_server_url(text):
        scheme = start.group(1)
        raise UsageError(
            f"{said}a URL of scheme '{scheme}:' names no database localeval can use: a team's "
            "database is postgresql://USER@HOST:PORT/DBNAME (or postgres://); a file whose "
            "name has ':/' in it is given as ./NAME"
        )
    if not is_server_url(text):
        return Path(text)
    from psycopg import ProgrammingError, conninfo

    kind = "URL" if start else "connection string"
    try:
        settings = conninfo.conninfo_to_dict(text)
    except ProgrammingError:
        advice = _ENCODE_ADVICE if start else _CONNINFO_ADVICE
        raise UsageError(
            f"{said}not a valid PostgreSQL {kind} as libpq reads it; {advice}"
        ) from None
    if start and "@" in str(settings.get("dbname", "")):
        # an unencoded / in a password ends libpq's host part there: the rest is read as the
        # database's name, password and all
        raise UsageError(f"{said}the PostgreSQL URL's database name holds an @; {_ENCODE_ADVICE}")
    ports = str(settings.get("port", "")).split(",")
    if not all(port.isdigit() for port in ports if port):
        raise UsageError(f"{said}the PostgreSQL {kind}'s port is not a number; {_ENCODE_ADVICE}")
    return ServerUrl(text)


def redacted(url: str) -> str:
    """The database as libpq reads it, as a URL without a password (`scheme://...` of the
    URL given; postgresql:// for a connection string); what cannot be read is not shown."""
    from psycopg import ProgrammingError, conninfo

    try:
        settings = {k: str(v) for k, v in conninfo.conninfo_to_dict(url).items()}
    except ProgrammingError:
        return "(a PostgreSQL URL that libpq cannot read)"
    start = _URL_START.match(url)
    scheme = start.group(1) if start else "postgresql"
    settings.pop("password", None)
    user = urllib.parse.quote(settings.pop("user", ""), safe="")
    hosts = settings.pop("host", "").split(",")
    ports = settings.pop("port", "").split(",")
    if len(ports) != len(hosts):  # one port for every host: said in the query
        settings["port"] = ",".join(ports)
        ports = [""] * len(hosts)
    pairs = zip(hosts, ports, strict=True)
    netloc = ",".join(_host(host) + (f":{port}" if port else "") for host, port in pairs)
    netloc = f"{user}@{netloc}" if user else netloc
    dbname = settings.pop("dbname", "")
    query = urllib.parse.urlencode(settings, quote_via=urllib.parse.quote)
    text = f"{scheme}://{netloc}" + (f"/{urllib.parse.quote(dbname, safe='')}" if dbname else "")
    return text + (f"?{query}" if query else "")


def _host(host: str) -> str:
    """A host as a URL writes it: an IPv6 address in brackets, a socket folder encoded."""
    if ":" in host:
        return f"[{host}]"
    return urllib.parse.quote(host, safe="")


def store_file(location: Location) -> Path | None:
    """The file the store is kept in (an SQLite file); None for a database on a server.
    Where the kinds of store differ outside this package, they are told apart by this."""
    return location if isinstance(location, Path) else None


def location_of(value: str | os.PathLike[str] | Location, where: str = "") -> Location:
    """A location given in code: a `ServerUrl` as it is, else its text read by
    `parse_location` (`where`, for a message)."""
    if isinstance(value, ServerUrl):
        return value
    if not isinstance(value, str | os.PathLike):
        said = f"{where}: " if where else ""
        raise UsageError(
            f"{said}expected a file path or a postgresql:// URL, got {type(value).__name__}"
        )
    return parse_location(os.fspath(value), where)


def database_files(location: Location) -> list[tuple[Path, str]]:
    """The run database and the journal files SQLite keeps beside it, which an output must
    not replace (none for a database on a server)."""
    file = store_file(location)
    if file is None:
        return []
    files = [(file, f"the run database ({param('db')})")]
    for suffix in ("-wal", "-journal", "-shm"):
        files.append((file.with_name(file.name + suffix), f"the run database's {suffix[1:]} file"))
    return files


def refuse_password(location: Location) -> None:
    """A URL on the command line must not hold a password: `ps` shows it to everyone."""
    if isinstance(location, ServerUrl) and location.password is not None:
        raise UsageError(
            f"{location}: holds a password, which every user of this machine can read on a "
            f"command line; {PASSWORD_ADVICE}"
        )


def default_db_path() -> Location:
    """$LOCALEVAL_DB (a file or a PostgreSQL URL), else .localeval/localeval.db in the
    working folder."""
    text = os.environ.get(DB_ENV)
    return parse_location(text, f"${DB_ENV}") if text else DEFAULT_DB


def db_words(location: Location | None) -> str:
    """The ` --db WHERE` a printed command needs to reach this store, quoted for a shell
    ("" for the default one; a URL without its password, which never goes on a command line)."""
    if location is None or str(location) == str(default_db_path()):
        return ""
    return f" --db {shlex.quote(str(location))}"
