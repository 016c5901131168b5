"""`localeval models`: the models of models.toml, and whether each is there and usable."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from localeval.backends import ModelStatus
from localeval.cli.options import echo, models_option, translate_errors

if TYPE_CHECKING:
    from localeval.config import JudgeConfig


@click.command("models")
@models_option
@translate_errors
def models_command(models_path: str | None) -> None:
    """List the judge and embedding models of models.toml and check their files."""
    from localeval.backends import embedder_backend, judge_backend
    from localeval.config import load_models_config

    models = load_models_config(models_path)
    lines = [f"models file: {models.source}", "", "judges:"]
    for name, judge in models.judges.items():
        found = judge_backend(judge.backend).status(judge.settings)
        lines.append(_line(name, name == models.default_judge, found))
        lines.append(f"   {'':<24} {_judge_note(name, judge, models.judge_aliases)}")
        if judge.thresholds:
            gates = ", ".join(f"{m} >= {v:.2f}" for m, v in judge.thresholds.items())
            lines.append(f"   {'':<24} gates on its scale: {gates}")
    lines += ["", "embedders:"]
    for name, embedder in models.embedders.items():
        found = embedder_backend(embedder.backend).status(embedder.settings)
        lines.append(_line(name, name == models.default_embedder, found))
    lines += ["", "* = default. Missing files: run scripts/setup.sh."]
    echo("\n".join(lines))


def _judge_note(name: str, judge: JudgeConfig, aliases: dict[str, str]) -> str:
    """Prompt set, calibration and aliases of one judge entry, in a line."""
    kinds = ", ".join(sorted(judge.calibration))
    calibrated = f"calibrated: {kinds}" if kinds else "uncalibrated (scores are raw P(Yes))"
    also = sorted(alias for alias, target in aliases.items() if target == name)
    named = f"; also called {', '.join(also)}" if also else ""
    return f"prompts {judge.prompts}; {calibrated}{named}"


def _line(name: str, default: bool, found: ModelStatus) -> str:
    status = "ok" if found.problem is None else f"PROBLEM: {found.problem}"
    mark = "*" if default else " "
    return f" {mark} {name:<24} {status:<10} {found.location}  ({found.note})"


COMMAND = models_command
