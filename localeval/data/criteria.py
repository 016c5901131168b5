"""Rubric criteria: the named qualities the rubric judge scores 0-10, each with a one-line
description, from the defaults, a TOML or YAML file, or "name: description" options.

A criteria file holds one table/mapping `criteria`, name to description:

    # criteria.toml                      # criteria.yaml
    [criteria]                           criteria:
    accuracy = "Facts agree with ..."      accuracy: Facts agree with ...
    tone = "Polite and plain."             tone: Polite and plain.

Every problem is a UsageError that names the file and, where it can be known, the line.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.errors import UsageError, param

#: a criterion's name becomes part of a score key ("rubric.accuracy")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_DESCRIPTION_CHARS = 200
MAX_CRITERIA = 10


@dataclass(frozen=True)
class Criterion:
    """One quality of an answer the judge scores: a short name and a one-line description."""

    name: str
    description: str


DEFAULT_CRITERIA: tuple[Criterion, ...] = (
    Criterion("accuracy", "the facts in the answer are correct"),
    Criterion("completeness", "the answer covers everything the question asks"),
    Criterion("clarity", "the answer is clear and easy to understand"),
)


def _problem(name: str, description: object) -> str | None:
    """What is wrong with one name/description pair, or None."""
    if not NAME_PATTERN.match(name):
        return (
            f"criterion name '{name}' must be lower-case letters, digits and _, starting "
            "with a letter, at most 40 characters"
        )
    if not isinstance(description, str):
        return f"criterion '{name}': the description must be a string"
    if not description.strip():
        return f"criterion '{name}': the description is empty"
    if "\n" in description.strip():
        return f"criterion '{name}': the description must be one line"
    if len(description.strip()) > MAX_DESCRIPTION_CHARS:
        return (
            f"criterion '{name}': the description is longer than {MAX_DESCRIPTION_CHARS} characters"
        )
    return None


def _check_count(count: int, where: str) -> None:
    if count == 0:
        raise UsageError(f"{where}: no criteria given")
    if count > MAX_CRITERIA:
        raise UsageError(f"{where}: {count} criteria given, at most {MAX_CRITERIA} are allowed")


def parse_criterion_option(text: str) -> Criterion:
    """A criterion from a command-line "name: description"."""
    name, sep, description = text.partition(":")
    name = name.strip()
    if not sep:
        raise UsageError(
            f"{param('rubric_criterion')} '{text}': expected NAME: DESCRIPTION, e.g. "
            "'tone: polite and free of jargon'"
        )
    if problem := _problem(name, description):
        raise UsageError(f"{param('rubric_criterion')} '{text}': {problem}")
    return Criterion(name, description.strip())


def criteria_from_options(texts: Sequence[str]) -> tuple[Criterion, ...]:
    criteria = tuple(parse_criterion_option(t) for t in texts)
    _check_count(len(criteria), param("rubric_criterion"))
    names = [c.name for c in criteria]
    for name in names:
        if names.count(name) > 1:
            raise UsageError(f"{param('rubric_criterion')}: '{name}' is given more than once")
    return criteria


def load_criteria_file(path: Path) -> tuple[Criterion, ...]:
    """Read criteria from a .toml, .yaml or .yml file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: criteria file not found") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a criteria file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc})") from None
    suffix = path.suffix.lower()
    if suffix == ".toml":
        pairs = _toml_pairs(path, text)
    elif suffix in (".yaml", ".yml"):
        pairs = _yaml_pairs(path, text)
    else:
        raise UsageError(f"{path}: a criteria file must end in .toml, .yaml or .yml")
    _check_count(len(pairs), str(path))
    criteria = []
    for name, description, line in pairs:
        if problem := _problem(name, description):
            where = f"{path}, line {line}" if line else str(path)
            raise UsageError(f"{where}: {problem}")
        criteria.append(Criterion(name, str(description).strip()))
    return tuple(criteria)


def _toml_pairs(path: Path, text: str) -> list[tuple[str, Any, int | None]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message already says "(at line N, column M)"
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    table = _criteria_table(path, data)
    lines = text.splitlines()
    return [(str(name), value, _toml_key_line(lines, str(name))) for name, value in table.items()]


def _toml_key_line(lines: list[str], key: str) -> int | None:
    """The line that assigns `key` (bare or quoted), for error messages; None if not found."""
    pattern = re.compile(rf"^\s*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')\s*=")
    for number, line in enumerate(lines, start=1):
        if pattern.match(line):
            return number
    return None


def _yaml_pairs(path: Path, text: str) -> list[tuple[str, Any, int | None]]:
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}, line {mark.line + 1}" if mark is not None else str(path)
        raise UsageError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(root, yaml.MappingNode):
        raise UsageError(f"{path}: expected a mapping with a 'criteria' key")
    for key, value in root.value:
        if key.value == "criteria":
            if not isinstance(value, yaml.MappingNode):
                raise UsageError(
                    f"{path}, line {value.start_mark.line + 1}: 'criteria' must map each "
                    "criterion's name to its description"
                )
            pairs: list[tuple[str, Any, int | None]] = []
            for name_node, description_node in value.value:
                line = name_node.start_mark.line + 1
                if not isinstance(description_node, yaml.ScalarNode) or description_node.tag != (
                    "tag:yaml.org,2002:str"
                ):
                    pairs.append((str(name_node.value), None, line))
                else:
                    pairs.append((str(name_node.value), description_node.value, line))
            seen: set[str] = set()
            for name, _, line in pairs:
                if name in seen:
                    raise UsageError(f"{path}, line {line}: criterion '{name}' is given twice")
                seen.add(name)
            return pairs
    raise UsageError(f"{path}: no 'criteria' mapping found")


def _criteria_table(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    table = data.get("criteria")
    if table is None:
        raise UsageError(f"{path}: no [criteria] table found")
    if not isinstance(table, dict):
        raise UsageError(f"{path}: 'criteria' must be a table of name = \"description\"")
    return table
