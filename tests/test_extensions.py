"""Backends and commands from installed packages' entry points (localeval.extensions): the
built-ins are entries of the same groups, a plugin cannot take a built-in's name, and one
that cannot be used says why in one line."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from localeval import backends, extensions
from localeval.backends import fake
from localeval.errors import ConfigError


def plugins(monkeypatch: pytest.MonkeyPatch, group: str, **values: str) -> None:
    """These entries as the installed packages' entries of `group`."""
    entries = [EntryPoint(name, value, group) for name, value in values.items()]
    monkeypatch.setattr(extensions, "installed", lambda asked: entries if asked == group else [])


def test_an_installed_backend_is_found_by_its_entry_name(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins(monkeypatch, extensions.JUDGE_BACKENDS, acme="localeval.backends.fake:JUDGE_BACKEND")
    assert backends.judge_backend("acme") is fake.JUDGE_BACKEND
    assert "acme" in backends.backend_names("judge")
    # an entry may name the module that declares the backend
    plugins(monkeypatch, extensions.EMBEDDER_BACKENDS, acme="localeval.backends.fake")
    assert backends.embedder_backend("acme") is fake.EMBEDDER_BACKEND


def test_the_built_ins_are_there_without_installed_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugins(monkeypatch, "nothing")
    assert backends.judge_backend("fake") is fake.JUDGE_BACKEND
    assert {"fake", "sentence-transformers"} <= set(backends.backend_names("embedder"))


def test_a_plugin_cannot_replace_a_built_in(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins(monkeypatch, extensions.JUDGE_BACKENDS, fake="localeval.backends.fake:EMBEDDER_BACKEND")
    assert backends.judge_backend("fake") is fake.JUDGE_BACKEND


def test_a_backend_that_cannot_be_used_says_why_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugins(monkeypatch, extensions.JUDGE_BACKENDS, gone="acme_missing:JUDGE_BACKEND")
    with pytest.raises(
        ConfigError,
        match=r"^judges.j: judge backend plugin 'gone' "
        r"\(acme_missing:JUDGE_BACKEND\) failed to import: ModuleNotFoundError",
    ):
        backends.judge_backend("gone", "judges.j")
    plugins(monkeypatch, extensions.JUDGE_BACKENDS, bare="localeval.backends.model_files")
    with pytest.raises(ConfigError, match="defines no JUDGE_BACKEND"):
        backends.judge_backend("bare")


def test_a_backend_two_packages_declare_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [
        EntryPoint("twice", "a:JUDGE_BACKEND", extensions.JUDGE_BACKENDS),
        EntryPoint("twice", "b:JUDGE_BACKEND", extensions.JUDGE_BACKENDS),
    ]
    monkeypatch.setattr(extensions, "installed", lambda group: entries)
    with pytest.raises(ConfigError, match=r"more than one installed package \(a:.*, b:.*\)"):
        backends.judge_backend("twice")


def test_a_command_named_like_a_built_in_is_left_out_with_one_line() -> None:
    from localeval import cli

    entry = EntryPoint("diff", "localeval.cli.diff", extensions.COMMANDS)
    assert cli._plugin_command(entry) == (
        "command plugin 'diff' (localeval.cli.diff) is named like the command 'diff'; rename it"
    )
    broken = EntryPoint("nope", "acme_missing", extensions.COMMANDS)
    assert "failed to import: ModuleNotFoundError" in str(cli._plugin_command(broken))
    empty = EntryPoint("empty", "localeval.errors", extensions.COMMANDS)
    assert cli._plugin_command(empty) == (
        "command plugin 'empty' (localeval.errors) defines no COMMAND (a click command)"
    )
