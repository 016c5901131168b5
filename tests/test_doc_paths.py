"""The docs name no machine's files: no absolute path of a machine's folders (the scratch
and bench folders are `$MEASURE` and `$BENCH`, docs/measurements/README.md) and no path
above the repository root, in README.md and docs/. Operating-system files (/dev/null,
/proc) and server endpoints (/v1/models) are not a machine's folders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: an absolute path into the folders where a machine keeps its users' and jobs' files
MACHINE_PATH = re.compile(
    r"(?<![\w.:/~-])/(?:work|tmp|root|home|Users|opt|mnt|srv|var|scratch|data)/", re.IGNORECASE
)
#: a markdown link's target, checked apart: it may climb folders inside the repository
LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")
PARENT = re.compile(r"(?<![\w.])\.\./")


def above_root(doc: Path, text: str) -> list[str]:
    """The `../` paths of `text` that leave the repository: a link's target resolved from
    the doc's folder, any other (prose, code) as written, since it names no file of the
    repository that a reader could follow."""
    found = []
    for target in LINK_TARGET.findall(text):
        file = (doc.parent / target.partition("#")[0]).resolve()
        if "://" not in target and not file.is_relative_to(ROOT):
            found.append(target)
    prose = LINK_TARGET.sub("]()", text)
    found += [line.strip() for line in prose.splitlines() if PARENT.search(line)]
    return found


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_machine_path_and_none_above_the_root(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    machine = [line.strip() for line in text.splitlines() if MACHINE_PATH.search(line)]
    assert machine == [], "name the folder by what it is ($MEASURE, $BENCH), not its path"
    assert above_root(doc, text) == []


def test_the_check_finds_both_kinds_of_path(tmp_path: Path) -> None:
    assert MACHINE_PATH.search("outputs in `/work/measure/q15/`")
    assert MACHINE_PATH.search("--target /tmp/plugin-site")
    assert not MACHINE_PATH.search("`/v1/models`, /dev/null, /proc, https://x.org/work/a")
    doc = ROOT / "docs" / "usage.md"
    assert above_root(doc, "on `../shared/bench` and [r](../README.md)") == [
        "on `../shared/bench` and [r]()"
    ]
    assert above_root(doc, "[outside](../../elsewhere.md)") == ["../../elsewhere.md"]
