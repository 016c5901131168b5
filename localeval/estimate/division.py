"""How a Ray cluster's actors would divide an estimated run (`evaluate --estimate --ray`):
the estimate's samples dealt to the actors as the run deals them (each to whichever actor is
free first), each sample's time scaled from this machine's judge threads to an actor's."""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass
from typing import Protocol

from localeval.backends import ThreadedSettings
from localeval.config import ModelsConfig
from localeval.estimate.counting import Estimate


class ClusterShape(Protocol):
    """The actors a cluster scores with (localeval.evaluation.requests.ClusterPlan), read
    only; its str() says them."""

    @property
    def address(self) -> str:
        """The cluster's address ("": one started here for the run)."""
        ...

    @property
    def actors(self) -> int: ...

    @property
    def threads(self) -> int: ...

    @property
    def nodes(self) -> int: ...

    @property
    def cpus(self) -> int: ...


@dataclass(frozen=True)
class Division:
    """How a cluster's actors divide an estimated run: samples the cache answers here, and
    each actor's samples and seconds (samples go to whichever actor is free first)."""

    plan: ClusterShape
    here: int
    per_actor: list[tuple[int, float]]
    #: the whole run's time on the cluster: the busiest actor's, its loading included
    seconds: float
    #: how much slower an actor's judge is than this machine's, in threads
    slower: float
    #: whether the estimate knew every speed (else the samples' seconds are not known)
    timed: bool = True

    def as_dict(self) -> dict[str, object]:
        """The division as --estimate --output writes it (under "ray")."""
        plan = self.plan
        return {
            "address": plan.address or None,
            "nodes": plan.nodes,
            "cpus": plan.cpus,
            "actors": plan.actors,
            "threads_per_actor": plan.threads,
            "answered_here": self.here,
            "samples_per_actor": [n for n, _ in self.per_actor],
            "seconds_per_actor": [round(s, 3) for _, s in self.per_actor],
            "seconds": round(self.seconds, 3),
            "actor_slower_by": round(self.slower, 3),
        }


def divide(estimate: Estimate, plan: ClusterShape, threads_here: int | None) -> Division:
    """The estimate's samples dealt to the plan's actors as the run deals them, each
    sample's time scaled from this machine's judge threads to an actor's."""
    slower = threads_here / plan.threads if threads_here else 1.0
    loading = sum(estimate.loading.values())
    items = list(estimate.per_item.values())
    first = next((i for i, seconds in enumerate(items) if seconds > 0), None)
    if first is not None:
        items[first] = max(0.0, items[first] - loading)  # each actor loads, below
    actors = [(loading, index) for index in range(plan.actors)]
    counts = [0] * plan.actors
    here = 0
    for seconds in items:
        if seconds <= 0:
            here += 1
            continue
        free_at, index = heapq.heappop(actors)
        counts[index] += 1
        heapq.heappush(actors, (free_at + seconds * slower, index))
    ends = {index: at for at, index in actors}
    per_actor = [(counts[i], ends[i] if counts[i] else 0.0) for i in range(plan.actors)]
    longest = max((s for _, s in per_actor), default=0.0)
    return Division(plan, here, per_actor, longest, slower, estimate.timed)


def threads_here(models: ModelsConfig, judge: str | None) -> int | None:
    """The threads this machine's judge runs with (what its measured speed is for), or
    None for a judge without threads (a server's)."""
    settings = models.judge(judge).settings
    if not isinstance(settings, ThreadedSettings) or settings.threads is None:
        return None
    return int(settings.threads) or os.cpu_count() or 1
