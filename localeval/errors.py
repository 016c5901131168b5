"""Exception types raised by the library; only the CLI turns them into messages and exit
codes (localeval/cli/exit_codes.py chooses a status for each type)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: a parameter named in a message, `param("until_decided")`: marked so that whoever shows
#: the message names it as its caller knows it (the Python keyword `until_decided`, the
#: command line's flag `--until-decided`); control characters, which no message says
_PARAM_START, _PARAM_END = "\x0e", "\x0f"
_PARAMS = re.compile(f"{_PARAM_START}([^{_PARAM_START}{_PARAM_END}]+){_PARAM_END}")

#: how a parameter is named: as the Python keyword, unless a caller (the command line, for
#: the time of a command) named them its own way; not per thread, since the scoring
#: threads of a command make its messages too
_naming: Callable[[str], str] = str


def param(name: str) -> str:
    """The parameter `name` (the Python keyword, or a Python spelling such as
    "resume=False") in a message: `f"{param('margin')} applies only with ..."`. A message
    that holds one is rendered (`rendered`) before it is shown or stored."""
    return f"{_PARAM_START}{name}{_PARAM_END}"


def rendered(text: str, naming: Callable[[str], str] | None = None) -> str:
    """`text` with each parameter of it named by `naming` (default: the current naming,
    the Python keyword unless `parameters_named` says otherwise)."""
    name = naming or _naming
    return _PARAMS.sub(lambda found: name(found.group(1)), text)


@contextmanager
def parameters_named(naming: Callable[[str], str]) -> Iterator[None]:
    """Messages name parameters by `naming` within the block (the command line: by its
    flags, `until_decided` -> "--until-decided"), as they did before it afterwards."""
    global _naming
    before, _naming = _naming, naming
    try:
        yield
    finally:
        _naming = before


def unrendered(error: BaseException) -> str:
    """The message of `error` with its parameters still marked: for a message carried to
    another process (a Ray worker's), rendered where it is shown."""
    return Exception.__str__(error) if isinstance(error, LocalevalError) else str(error)


class LocalevalError(Exception):
    """Base class for every error localeval reports to a user. Its message names a
    parameter (`param`) as the caller knows it: str() renders it."""

    def __str__(self) -> str:
        return rendered(super().__str__())

    def __repr__(self) -> str:  # as a notebook shows it: no mark either
        return f"{type(self).__name__}({str(self)!r})"


class UsageError(LocalevalError):
    """The user asked for what cannot be done as asked (bad option value, unknown name)."""


def locate(
    path: str, line: int | None = None, field: str | None = None, row: int | None = None
) -> str:
    """'PATH, line N, field 'F'' (or 'PATH, row R (line N), ...' in a JSON array, where many
    rows may share a line), leaving out what is not known."""
    where = path if line is None else f"{path}, line {line}"
    if row is not None:
        where = f"{path}, row {row}" + ("" if line is None else f" (line {line})")
    if field is not None:
        where += f", field '{field}'"
    return where


class DatasetError(UsageError):
    """An input file is unreadable or a row in it is invalid.

    The message always names the file, and the line and field where they are known.
    """

    def __init__(
        self,
        path: str,
        message: str,
        line: int | None = None,
        field: str | None = None,
        row: int | None = None,
    ):
        self.path = path
        self.line = line
        self.field = field
        self.row = row
        self.detail = message
        super().__init__(f"{locate(path, line, field, row)}: {message}")

    def at(self, path: str | None = None, row: int | None = None) -> DatasetError:
        """The same error, naming the file `path` (how the user named it) and the row."""
        return DatasetError(
            path or self.path, self.detail, self.line, self.field, self.row if row is None else row
        )


class ConfigError(UsageError):
    """models.toml (or another settings file) is missing, malformed, or names something unknown."""


class ModelFileError(UsageError):
    """A model file is missing, truncated, of the wrong format, or does not match its sha256."""


class JudgeError(LocalevalError):
    """The judge failed in a way that is not the user's fault (a bug, a llama.cpp failure)."""


class PromptTooLongError(JudgeError):
    """A prompt does not fit the judge's context window."""

    def __init__(self, n_tokens: int, n_ctx: int):
        self.n_tokens = n_tokens
        self.n_ctx = n_ctx
        super().__init__(f"prompt of {n_tokens} tokens does not fit the judge's context of {n_ctx}")


class VerdictUnreadable(JudgeError):
    """The judge's reply gives no probability to any of the answers asked for (a server
    whose likeliest first tokens are none of Yes/No): the metric is undefined for that
    sample, with this reason, never a silent 0.5."""


class MetricFailed(LocalevalError):
    """A metric from outside localeval (a plugin) raised, or called sys.exit, instead of
    returning a result: its error, named with the metric and the sample; the run is kept
    (the samples stored before it) for the command to continue once the plugin is fixed."""

    def __init__(self, metric: str, sample_id: str, error: BaseException):
        self.metric = metric
        self.sample_id = sample_id
        if isinstance(error, SystemExit):
            what = f"it called sys.exit({error.code!r})"
        else:
            what = type(error).__name__ + (f": {error}" if str(error) else "")
        super().__init__(
            f"metric plugin '{metric}' failed on sample '{sample_id}': {what} (set "
            "LOCALEVAL_DEBUG=1 for the traceback)"
        )


class RunInUseError(UsageError):
    """A run is being written by another live process, so this one may not record into it."""

    def __init__(self, run_id: str, holder: str, seconds_ago: float | None):
        self.run_id = run_id
        self.holder = holder
        self.seconds_ago = seconds_ago
        since = "" if seconds_ago is None else f", last sample stored {seconds_ago:.0f} s ago"
        super().__init__(f"run {run_id} is being written by {holder} now{since}")


class NoRunHistory(UsageError):
    """No run history is kept where one was to be read (nothing is created just to look):
    `location` as printed, and `absence`, what is there instead ("does not exist", "holds
    no run history yet")."""

    def __init__(self, location: str, absence: str):
        self.location = location
        self.absence = absence
        super().__init__(
            f"no run history at {location}: `localeval evaluate DATA` creates it "
            f"(or give {param('db')} PATH / set LOCALEVAL_DB)"
        )


class SameDatabase(UsageError):
    """Runs were to be copied into the database they are in."""


class CopyFailed(UsageError):
    """Copying runs failed on one `side` ("source" or "target"), with that side's message
    (the error itself is the cause)."""

    def __init__(self, message: str, side: str):
        self.side = side
        super().__init__(message)


class BudgetSpent(LocalevalError):
    """A run reached its budget (max_minutes or max_calls) and stopped, resumable;
    `limit`: which, with its parameter marked ("max_calls 500")."""

    def __init__(self, limit: str, scored: int, seconds: float, judge_calls: int):
        self.limit = limit
        self.scored = scored
        self.seconds = seconds
        self.judge_calls = judge_calls
        super().__init__(
            f"{limit} is spent: {scored} samples scored in {seconds / 60:.1f} minutes "
            f"with {judge_calls} judge calls"
        )


class ClusterError(LocalevalError):
    """The Ray cluster or one of its workers failed."""


class WorkerUsageError(ClusterError, UsageError):
    """A worker refused what it was given (another localeval, another model file than the
    driver's): the user's to fix, as on the driver."""


class ClusterLost(ClusterError):
    """The cluster lost what the run needs (an actor that died past Ray's restarts, its
    node, an object): not a bug of localeval's nor bad input; the run is kept for the same
    command to continue it."""
