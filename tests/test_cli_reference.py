"""docs/cli.md is the command line's `--help`, as scripts/cli_reference.py writes it: the
test fails when a command, option or help text changed and the page was not rewritten."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_cli_reference_is_the_commands_help() -> None:
    # a process of its own: no metric plugin or registry state of this test session leaks in
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr.strip()


def test_every_command_has_a_section() -> None:
    from localeval.cli import main

    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in main.commands:
        assert f"\n## localeval {name}\n" in page, name
