"""The docs hold together: every relative link of README.md and docs/ reaches a file (and
its #anchor a heading there), every docs/ path the code and tests name exists, and no
heading carries an issue number or a date (the docs say what is, not when it came)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
#: a docs path as code, tests and models.toml name it ("docs/measurements/speed.md")
CODE_MENTION = re.compile(r"(?<![\w/.-])docs/[\w/.-]+\.(?:md|png)")
#: a made-up document's path in the test-set tests' data, not a doc of this repository
SAMPLE_PATHS = {"docs/a.md"}
DATED_OR_NUMBERED = re.compile(r"\bissue\s*\d|\(#\d+\)|#\d+\b|\b20\d\d-\d\d", re.IGNORECASE)


def headings(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [line.lstrip("#").strip() for line in text.splitlines() if re.match(r"#+\s", line)]


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a markdown file's headings: lower case, punctuation dropped,
    spaces as hyphens, a repeated one numbered."""
    seen: dict[str, int] = {}
    result = set()
    for heading in headings(path):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [link for link in LINK.findall(text) if "://" not in link and ":" not in link[:7]]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_a_heading(doc: Path) -> None:
    broken = []
    for link in relative_links(doc):
        target, _, anchor = link.partition("#")
        file = (doc.parent / target).resolve() if target else doc
        missing_anchor = anchor and file.suffix == ".md" and anchor not in anchors(file)
        if not file.exists() or missing_anchor:
            broken.append(link)
    assert broken == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_heading_names_an_issue_or_a_date(doc: Path) -> None:
    assert [h for h in headings(doc) if DATED_OR_NUMBERED.search(h)] == []


def test_every_docs_path_the_code_names_exists() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "localeval", "tests", "scripts", "examples", "models.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    missing = set()
    for name in tracked:
        path = ROOT / name
        if path.suffix not in {".py", ".toml", ".sh", ".md", ".js", ".html"} or not path.exists():
            continue
        for mention in CODE_MENTION.findall(path.read_text(encoding="utf-8")):
            if mention not in SAMPLE_PATHS and not (ROOT / mention).exists():
                missing.add(f"{name}: {mention}")
    assert sorted(missing) == []
