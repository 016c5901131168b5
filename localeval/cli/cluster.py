"""`evaluate --ray`'s options (what it says about how the actors would divide the work,
with --estimate: localeval.reports.estimate_text.division_text)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from localeval.api import RaySettings

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
    from localeval.api import RaySettings

    if address is None:
        for value, option in ((actors, "--ray-actors"), (threads, "--ray-threads")):
            if value is not None:
                raise click.UsageError(f"{option} applies only with --ray")
        return None
    return RaySettings(address, actors, threads)
