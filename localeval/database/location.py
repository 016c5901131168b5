"""Where the run history and the cache are: an SQLite file (a `Path`, the default) or a
PostgreSQL database named by a libpq URL (`ServerUrl`).

A URL prints without its password, wherever it is printed (`str`, `repr`, messages, run
records): the password is only ever handed to libpq. `--db` refuses a URL with a password,
since a command line is visible to every user of the machine (`ps`); libpq's own ways
(PGPASSWORD, ~/.pgpass, a PGSERVICE service file) give it instead.
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from localeval.errors import UsageError

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
    """A PostgreSQL database, `postgresql://USER@HOST:PORT/DBNAME[?sslmode=...]`."""

    url: str = field(repr=False)

    def __str__(self) -> str:
        return redacted(self.url)

    def __repr__(self) -> str:
        return f"ServerUrl({redacted(self.url)!r})"

    @property
    def password(self) -> str | None:
        """The password the URL itself holds (from $LOCALEVAL_DB), if any."""
        parts = urllib.parse.urlsplit(self.url)
        if parts.password:
            return urllib.parse.unquote(parts.password)
        query = urllib.parse.parse_qs(parts.query)
        return query["password"][0] if query.get("password") else None


#: an SQLite file or a PostgreSQL database
Location = Path | ServerUrl


def is_server_url(text: str) -> bool:
    return text.partition("://")[0].lower() in SCHEMES and "://" in text


def parse_location(text: str, where: str = "") -> Location:
    """A `--db` or $LOCALEVAL_DB value (`where`, for a message): a server URL (checked),
    else a file path."""
    if not is_server_url(text):
        return Path(text)
    said = f"{where} {redacted(text)}" if where else redacted(text)
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError as exc:
        raise UsageError(f"{said}: not a valid PostgreSQL URL ({exc})") from None
    if parts.fragment:
        raise UsageError(f"{said}: a PostgreSQL URL has no #fragment")
    return ServerUrl(text)


def redacted(url: str) -> str:
    """The URL without a password in its user part or its query."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url.partition("://")[0] + "://..."
    netloc, query = parts.netloc, parts.query
    if parts.password is not None or ":@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if k.lower() != "password"]
    if len(kept) != len(pairs):
        query = urllib.parse.urlencode(kept, safe="/:")
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    # not urlunsplit, which drops the // of an empty host (postgresql:///db)
    text = f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
    return text + (f"#{parts.fragment}" if parts.fragment else "")


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
