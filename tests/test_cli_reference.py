"""docs/cli.md is every command's --help as the commands say it now (issue 54): a change of
an option or a help text without regenerating the page fails here."""

from __future__ import annotations

from script_modules import load_script

reference = load_script("cli_reference")


def test_the_cli_reference_is_generated_from_the_commands_help() -> None:
    written = reference.PAGE.read_text(encoding="utf-8")
    assert written == reference.page(), (
        "docs/cli.md is stale: run `python scripts/cli_reference.py`"
    )


def test_it_has_every_command() -> None:
    page = reference.page()
    for command in ("evaluate", "doctor", "runs show", "labels import", "cache stats"):
        assert f"\n## localeval {command}\n" in page
