"""`evaluate --ray`'s options, and what it says about the cluster: its actors, what they
did, and with --estimate how they divide the work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from localeval.evaluation.estimate import Division
from localeval.evaluation.requests import RaySettings
from localeval.report.estimate_text import duration

F = TypeVar("F", bound=Callable[..., Any])


def ray_options(command: F) -> F:
    """--ray [ADDRESS], --ray-actors N, --ray-threads N."""
    command = click.option(
        "--ray-threads",
        type=int,
        default=None,
        metavar="N",
        help="With --ray: the CPUs each actor takes, and the threads its judge runs with "
        "(default 1).",
    )(command)
    command = click.option(
        "--ray-actors",
        type=int,
        default=None,
        metavar="N",
        help="With --ray: how many actors score, each loading the judge and embedder once "
        "(default: as many as the nodes' CPUs and memory hold without oversubscribing).",
    )(command)
    command = click.option(
        "--ray",
        "ray_address",
        is_flag=False,
        flag_value="auto",
        default=None,
        metavar="[ADDRESS]",
        help="Score the samples on a Ray cluster (pip install 'localeval[ray]'): the one at "
        "ADDRESS (the head's HOST:PORT), else the one RAY_ADDRESS names, else a local "
        "one started for the run. This process keeps the run, the cache and the gates; "
        "every node needs the model files at models.toml's paths (docs/scale.md). Put DATA "
        "before a bare --ray.",
    )(command)
    return command


def ray_settings(
    address: str | None, actors: int | None, threads: int | None
) -> RaySettings | None:
    """The request's Ray settings (None: scored in this process); the actor options need
    --ray."""
    if address is None:
        for value, option in ((actors, "--ray-actors"), (threads, "--ray-threads")):
            if value is not None:
                raise click.UsageError(f"{option} applies only with --ray")
        return None
    return RaySettings(address, actors, threads)


def division_text(division: Division) -> str:
    """How the cluster's actors would divide the estimated run."""
    plan = division.plan
    counts = [n for n, _ in division.per_actor]
    seconds = [s for n, s in division.per_actor if n]
    sent = sum(counts)
    lines = [
        "",
        f"On Ray: {plan}",
        f"  samples sent to the actors: {sent} ({division.here} answered from the cache "
        "or without a model here)",
    ]
    if not division.timed:
        lines.append("  (the models' speeds are not known: how the time divides cannot be said)")
    elif seconds:
        fewest, most = min(counts), max(counts)
        share = f"{fewest}" if fewest == most else f"{fewest} to {most}"
        lines.append(
            f"  each actor: {share} samples, {duration(min(seconds))} to "
            f"{duration(max(seconds))} with its models' loading"
        )
        lines.append(f"  the run: about {duration(division.seconds)} on the cluster")
        if division.slower != 1.0:
            lines.append(
                f"  (an actor's judge taken as {division.slower:.3g}× as slow as this "
                f"machine's, for its {plan.threads} thread(s): each node's cores are taken to "
                "be as fast as this machine's)"
            )
    return "\n".join(lines)
