"""`localeval models`: the models of models.toml, and whether each is there and usable."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from localeval.cli.options import echo, models_option, translate_errors

if TYPE_CHECKING:
    from localeval.api import Model


@click.command("models")
@models_option
@translate_errors
def models_command(models_path: str | None) -> None:
    """List the judge and embedding models of models.toml and check their files."""
    from localeval.api import list_models

    listed = list_models(models_path)
    lines = [f"models file: {listed.source}", "", "judges:"]
    for judge in listed.judges:
        lines.append(_line(judge))
        lines.append(f"   {'':<24} {_judge_note(judge)}")
        if judge.thresholds:
            gates = ", ".join(f"{m} >= {v:.2f}" for m, v in judge.thresholds.items())
            lines.append(f"   {'':<24} gates on its scale: {gates}")
    lines += ["", "embedders:"]
    lines += [_line(embedder) for embedder in listed.embedders]
    lines += ["", "* = default. Missing files: run scripts/setup.sh."]
    echo("\n".join(lines))


def _judge_note(judge: Model) -> str:
    """Prompt set, calibration and aliases of one judge entry, in a line."""
    kinds = ", ".join(judge.calibrated)
    calibrated = f"calibrated: {kinds}" if kinds else "uncalibrated (scores are raw P(Yes))"
    named = f"; also called {', '.join(judge.aliases)}" if judge.aliases else ""
    return f"prompts {judge.prompts}; {calibrated}{named}"


def _line(model: Model) -> str:
    status = "ok" if model.problem is None else f"PROBLEM: {model.problem}"
    mark = "*" if model.default else " "
    return f" {mark} {model.name:<24} {status:<10} {model.location}  ({model.note})"


COMMAND = models_command
