"""Write docs/cli.md, the command line's reference, from the commands' own `--help`.

    python scripts/cli_reference.py          # rewrite docs/cli.md
    python scripts/cli_reference.py --check  # exit 1 when docs/cli.md is stale

The page is click's help rendering of every command and subcommand, at a fixed width so
that it reads the same on every machine; tests/test_cli_reference.py fails when it is stale.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "cli.md"
#: the one command that rewrites the page, as the stale test prints it
REGENERATE = "python scripts/cli_reference.py"
#: the help's width, fixed so that a terminal's size does not change the page
WIDTH = 88
HEADER = f"""# Command-line reference

Every command's `--help`, as the command line prints it. Written by
`{REGENERATE}` from the commands themselves; a test fails when it is stale.
How to use them together: [usage.md](usage.md).
"""


def commands(
    command: click.Command, path: tuple[str, ...], parent: click.Context | None
) -> Iterator[tuple[tuple[str, ...], click.Context]]:
    """Every command under `command`, itself first, each with the context its help renders
    in; a group's subcommands in name order."""
    settings = {**command.context_settings, "max_content_width": WIDTH}
    context = click.Context(command, info_name=path[-1], parent=parent, **settings)
    context.terminal_width = WIDTH
    yield path, context
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(context)):
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                yield from commands(sub, (*path, name), context)


def render() -> str:
    """docs/cli.md's text: the header, then one section per command."""
    from localeval import extensions

    # localeval's own only: a plugin installed here adds no command, -m name or flag
    extensions.installed = lambda group: []  # type: ignore[assignment]
    from localeval.cli import main

    sections = [HEADER]
    for path, context in commands(main, ("localeval",), None):
        help_text = context.command.get_help(context).rstrip()
        sections.append(f"## {' '.join(path)}\n\n```text\n{help_text}\n```\n")
    return "\n".join(sections)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if PAGE.exists() and PAGE.read_text(encoding="utf-8") == text:
            return 0
        print(f"docs/cli.md is stale; regenerate it with: {REGENERATE}", file=sys.stderr)
        return 1
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # this checkout's localeval before an installed one
    raise SystemExit(main(sys.argv[1:]))
