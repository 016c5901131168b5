"""The entry-point groups through which an installed package extends localeval, and the
loading of one entry, the same for every kind (as `llm` finds its plugins):

    [project.entry-points."localeval.judge_backends"]
    acme-judge = "acme_judge:JUDGE_BACKEND"

localeval's own metrics, backends and commands are entries of the same groups, listed in
code (`built_in`) rather than read from the installed package's metadata, so that they
are there however localeval was installed. Standard library only: the backends' registry
sits below every model library.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

METRICS = "localeval.metrics"
JUDGE_BACKENDS = "localeval.judge_backends"
EMBEDDER_BACKENDS = "localeval.embedder_backends"
COMMANDS = "localeval.commands"


def built_in(group: str, values: dict[str, str]) -> list[EntryPoint]:
    """localeval's own entries of `group`, name -> `module` or `module:attribute`."""
    return [EntryPoint(name, value, group) for name, value in values.items()]


def installed(group: str) -> list[EntryPoint]:
    """The entries of `group` that installed packages declare."""
    return list(entry_points(group=group))


def by_name(entries: Iterable[EntryPoint]) -> dict[str, list[EntryPoint]]:
    """The entries grouped by name: more than one under a name is a clash to report."""
    found: dict[str, list[EntryPoint]] = {}
    for entry in entries:
        found.setdefault(entry.name, []).append(entry)
    return found


def load(entry: EntryPoint, where: str) -> tuple[Any, str | None]:
    """What the entry names, or None with the one line that says why it cannot be had
    (`where` says what it is: "judge backend plugin 'acme' (acme_judge:JUDGE_BACKEND)")."""
    try:
        return entry.load(), None
    except Exception as exc:  # whatever a third-party module raises on import
        said = str(exc).splitlines()[0] if str(exc) else ""
        return None, f"{where} failed to import: {type(exc).__name__}" + (
            f": {said}" if said else ""
        )
