"""The docs name no machine's paths: no absolute path into a machine's folders (/work,
/tmp, /root, /home) and no path above the repository root, so they read the same on a
user's clone (issue 54). Links between the docs stay relative and inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: an absolute path into a machine's own folders, where a word or a code span starts
MACHINE_PATH = re.compile(r"(?:^|[\s`(\"'=:])(/(?:work|tmp|root|home)/[^\s`)]*)")
#: a relative path: a Markdown link's target or a code span
RELATIVE = re.compile(r"\]\(([^)#\s]+)|`(\.\./[^`\s]*)`")


def test_no_doc_names_a_path_of_the_machine_it_was_written_on() -> None:
    found = [
        f"{doc.relative_to(ROOT)}:{n}: {match.group(1)}"
        for doc in DOCS
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
        for match in MACHINE_PATH.finditer(line)
    ]
    assert found == []


def test_no_doc_points_above_the_repository_root() -> None:
    found = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in RELATIVE.finditer(line):
                link, code = match.group(1), match.group(2)
                target = link or code
                if "://" in target or target.startswith("mailto:"):
                    continue
                # a link is relative to its page; a path in a code span to the repository
                resolved = ((doc.parent if link else ROOT) / target).resolve()
                if not resolved.is_relative_to(ROOT):
                    found.append(f"{doc.relative_to(ROOT)}:{n}: {target}")
    assert found == []
