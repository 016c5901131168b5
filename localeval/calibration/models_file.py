"""Calibration maps as models.toml text, and saving them into a judge's entry.

The maps go in the judge's `[judges."NAME".calibration.KIND]` tables, replacing any there
were; the rest of the file (comments included) is kept as it was. The new text is read
back with the same checks as any models.toml before it replaces the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from localeval.config import load_models_config
from localeval.errors import ConfigError
from localeval.results.output_files import write_text
from localeval.verdict_maps import VerdictMap

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _key(judge: str) -> str:
    return "judges." + json.dumps(judge)


def calibration_toml(judge: str, maps: Mapping[str, VerdictMap]) -> str:
    """The judge's calibration tables, as models.toml text."""
    lines: list[str] = []
    for kind, found in sorted(maps.items()):
        lines.append(f"[{_key(judge)}.calibration.{kind}]")
        lines.append(f"a = {found.a:.4f}")
        lines.append(f"b = {found.b:.4f}")
        if found.ece is not None:
            lines.append(f"ece = {found.ece:.4f}  # on rows the map was not fitted on")
        if found.fitted_on:
            lines.append(f"fitted_on = {json.dumps(found.fitted_on, ensure_ascii=False)}")
        if found.reliability:
            lines.append("reliability = [  # low, high, rows, mean score, share labelled positive")
            lines += [
                f"    [{lo:.1f}, {hi:.1f}, {n}, {score:.4f}, {label:.4f}],"
                for lo, hi, n, score, label in found.reliability
            ]
            lines.append("]")
        lines.append("")
    return "\n".join(lines)


def without_calibration(text: str, judge: str) -> tuple[str, int | None]:
    """The file's text without the judge's calibration tables, and the line after the
    judge's last remaining table (None when the file has no table of that judge)."""
    own = _key(judge)
    out: list[str] = []
    skipping = False
    after: int | None = None
    current = ""
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header:
            current = header.group(1).replace(" ", "")
            skipping = current.startswith(f"{own}.calibration")
        if skipping:
            continue
        out.append(line)
        if current == own or current.startswith(own + "."):
            after = len(out)
    return "".join(out), after


def save_calibration(models_file: Path, judge: str, maps: Mapping[str, VerdictMap]) -> Path:
    """Write the maps into the judge's entry of models.toml; the file written (a link's
    target). ConfigError if the judge has no entry there or the result would not load."""
    target = models_file.resolve()
    text = target.read_text(encoding="utf-8")
    rest, after = without_calibration(text, judge)
    if after is None:
        raise ConfigError(f"{models_file}: no [{_key(judge)}] entry to save the calibration in")
    lines = rest.splitlines(keepends=True)
    while after > 1 and not lines[after - 1].strip():
        after -= 1  # before the blank lines that end the entry
    block = calibration_toml(judge, maps)
    head = "".join(lines[:after])
    if not head.endswith("\n"):
        head += "\n"
    new = head + "\n" + block + "".join(lines[after:])
    probe = target.with_name(f".{target.name}.check")
    write_text(probe, new)
    try:
        checked = load_models_config(probe).judge(judge)
    finally:
        probe.unlink(missing_ok=True)
    if set(checked.calibration) != set(maps):
        raise ConfigError(f"{models_file}: the saved calibration did not read back")  # a bug
    write_text(target, new)
    return target
