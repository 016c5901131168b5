"""Write docs/cli.md, the command-line reference, from each command's own --help.

Run `python scripts/cli_reference.py` after changing a command's options or help text;
`--check` exits 1 when docs/cli.md differs from what the commands say (the test suite runs
the same comparison: tests/test_cli_reference.py). The help is rendered by click itself, at
a fixed width, so the page is the same on every machine.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "cli.md"
WIDTH = 100
HEADER = """# Command-line reference

Every command's `--help`, as `localeval` prints it. Generated from the commands themselves
by `python scripts/cli_reference.py` (a test fails when this page is stale): edit the help
texts in `localeval/cli/`, not this page. How the commands fit together: [usage.md](usage.md);
exit statuses: [reference.md](reference.md#exit-status).
"""


def commands(
    command: click.Command, path: list[str], parent: click.Context | None = None
) -> Iterator[tuple[list[str], str]]:
    """Each command under `command` (itself first) with its help text, in name order."""
    context = click.Context(
        command,
        info_name=path[-1],
        parent=parent,
        terminal_width=WIDTH,
        max_content_width=WIDTH,
        help_option_names=["-h", "--help"],
    )
    yield path, command.get_help(context)
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(context)):
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                yield from commands(sub, [*path, name], context)


def page() -> str:
    """docs/cli.md as the commands say it now."""
    sys.path.insert(0, str(ROOT))
    from localeval.cli import main

    parts = [HEADER]
    for path, text in commands(main, ["localeval"]):
        parts.append(f"\n## {' '.join(path)}\n\n```\n{text.rstrip()}\n```\n")
    return "".join(parts)


def main() -> int:
    made = page()
    if "--check" in sys.argv[1:]:
        if PAGE.read_text(encoding="utf-8") != made:
            print("docs/cli.md is stale: run python scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(made, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
