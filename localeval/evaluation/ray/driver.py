"""`evaluate --ray`: the samples scored by Ray actors, each with its own judge and embedder
(localeval.evaluation.ray.actor), while this process, the driver, keeps everything else: the
run in the store, each sample committed as it comes back, the cache, gates and reports.

`RayScoring` is the engine's scheduler for such a run (localeval.engine.score_samples). Each
sample is first scored here by the driver's tools, which answer from the cache alone
(localeval.evaluation.ray.remote): a sample the cache answers in full is done without the cluster,
and one with a miss goes to the least busy ready actor, with what the cache found for it
(each metric's answers up to its own first miss).
An actor holds at most `PER_ACTOR` samples (one scoring, one waiting, so that it never idles
for a round trip); results come back in any order, their cache entries are stored at once
(a driver killed later re-sends nothing that finished), and the samples are handed on in
dataset order. Ray restarts an actor whose process dies and runs its samples again
(`RESTARTS`), so a sample is scored once: neither lost nor stored twice. The actors start
at the first miss: a warm re-run starts none.

Ray is an optional dependency (localeval[ray]), imported only when a run asks for it
(localeval.evaluation.ray.join joins the cluster).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.config import ModelsConfig
from localeval.data.samples import Sample
from localeval.database import Database
from localeval.engine import Score, score_metric
from localeval.errors import ClusterError as ClusterError  # re-exported: the room's errors
from localeval.errors import ClusterLost as ClusterLost
from localeval.errors import WorkerUsageError as WorkerUsageError
from localeval.evaluation.ray.actor import (
    Failure,
    Finished,
    SampleScorer,
    Started,
    WorkerJob,
    code_digest,
)
from localeval.evaluation.ray.join import Connection
from localeval.evaluation.ray.remote import CacheMiss, Chosen, DriverTools, Found, keep_entries
from localeval.evaluation.requests import RaySettings
from localeval.metrics import Metric
from localeval.results.model import SampleResult

#: samples an actor holds at once: one it scores, one waiting
PER_ACTOR = 2
#: how often Ray restarts a dead actor (and runs its samples again) before the run stops
RESTARTS = 3
#: seconds between looks while waiting for results (Ctrl-C is seen at least this often)
WAIT_S = 0.5
#: an actor's memory beyond its model files (llama.cpp's context, torch, Python): with the
#: default judge and embedder an actor's proportional share measured 1.6 GB (docs/scale.md)
RUNTIME_BYTES = 512 * 2**20


def actor_bytes(models: ModelsConfig, chosen: Chosen) -> int:
    """The memory an actor takes: its model files and the runtime around them (0 where the
    models have no files, as fakes and servers: Ray's own accounting then suffices)."""
    paths: list[Path] = []
    if chosen.judge is not None:
        paths.append(getattr(models.judge(chosen.judge).settings, "path", None) or Path())
    if chosen.embedder is not None:
        paths.append(getattr(models.embedder(chosen.embedder).settings, "path", None) or Path())
    size = 0
    for path in paths:
        if path.is_file():
            size += path.stat().st_size
        elif path.is_dir() and str(path) not in ("", "."):
            size += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return size + RUNTIME_BYTES if size else 0


@dataclass
class Actor:
    """One actor as the driver tracks it: ready once its models loaded, and how many
    samples it holds."""

    handle: Any
    ready: bool = False
    held: int = 0


@dataclass
class Slot:
    """A sample on its way: its place in the data, and its result once there is one."""

    position: int
    sample: Sample
    found: Found | None = None
    result: SampleResult | None = None


class RayScoring:
    """One evaluation's scoring on a Ray cluster: `tools`, the driver's (the run's record,
    the cache), and `run`, the engine's scheduler; `close()` stops the actors and leaves
    the cluster."""

    def __init__(
        self,
        settings: RaySettings,
        models: ModelsConfig,
        metrics: Sequence[Metric],
        judge: str | None,
        embedder: str | None,
        cache: Database | None,
    ):
        chosen = Chosen.of(models, metrics, judge, embedder)
        self.driver = DriverTools(models, chosen, cache)  # the files here checked first
        self.tools = self.driver.tools
        self.cache = cache
        self.connection = Connection(settings)
        self.ray = self.connection.ray
        self.memory = actor_bytes(models, chosen)
        try:
            self.plan = self.connection.plan(settings, self.memory)
        except BaseException:
            self.connection.close()
            raise
        self.job = WorkerJob(
            models,
            chosen,
            list(metrics),
            self.plan.threads,
            cache is not None,
            self.driver.identities(),
            code_digest(),
        )
        self.actors: list[Actor] = []
        self.pending: dict[Any, tuple[Actor, Slot | None]] = {}
        #: samples sent to the actors, answered from the cache here, and results that came
        #: back before one sent earlier
        self.sent = self.answered = self.overtaken = 0

    def run(
        self, jobs: Iterable[tuple[int, Sample]], score: Score
    ) -> Iterator[tuple[int, SampleResult]]:
        window: deque[Slot] = deque()
        waiting: deque[Slot] = deque()  # misses no actor holds yet
        source = iter(jobs)
        more = True
        try:
            while True:
                while more and self._room(window, waiting):
                    job = next(source, None)
                    if job is None:
                        more = False
                        break
                    window.append(self._here(job, score, waiting))
                self._dispatch(waiting)
                if not window:
                    return
                if window[0].result is not None:
                    slot = window.popleft()
                    yield slot.position, slot.result
                    continue
                self._collect()
        finally:
            self._stop()

    def _room(self, window: deque[Slot], waiting: deque[Slot]) -> bool:
        """Whether to take another sample: the actors' slots are not all taken, and the
        results waiting for an earlier one stay few (memory stays flat)."""
        out = len(waiting) + sum(1 for _, slot in self.pending.values() if slot is not None)
        limit = PER_ACTOR * self.plan.actors
        return out < limit and len(window) < 2 * limit + 16

    def _here(self, job: tuple[int, Sample], score: Score, waiting: deque[Slot]) -> Slot:
        """The sample scored from the cache here, or put to wait for an actor."""
        position, sample = job
        try:
            result = score(sample)
        except CacheMiss:
            # each metric on its own up to its own first miss: what the cache holds for the
            # metrics after the one that missed goes out too
            for metric in self.job.metrics:
                try:
                    score_metric(sample, metric, self.tools)
                except CacheMiss:
                    continue
            slot = Slot(position, sample, self.driver.taken())
            waiting.append(slot)
            self.sent += 1
            self._start()
            return slot
        self.driver.taken()
        self.answered += 1
        return Slot(position, sample, result=result)

    def _start(self) -> None:
        """The actors, started at the first sample the cache cannot answer."""
        if self.actors:
            return
        options: dict[str, Any] = {
            "num_cpus": self.plan.threads,
            "max_restarts": RESTARTS,
            "max_task_retries": RESTARTS,
            "scheduling_strategy": "SPREAD",
        }
        if self.memory:
            options["memory"] = self.memory
        scorer = self.ray.remote(SampleScorer).options(**options)
        # the job itself, not a reference to it in the object store: a restarted actor is
        # given it again (it is a few kilobytes: models.toml's entries and the metrics)
        for _ in range(self.plan.actors):
            actor = Actor(scorer.remote(self.job))
            self.actors.append(actor)
            self.pending[actor.handle.started.remote()] = (actor, None)

    def _dispatch(self, waiting: deque[Slot]) -> None:
        """Waiting samples to the ready actors that hold the fewest."""
        while waiting:
            free = [a for a in self.actors if a.ready and a.held < PER_ACTOR]
            if not free:
                return
            actor = min(free, key=lambda a: a.held)
            slot = waiting.popleft()
            reference = actor.handle.score.remote(slot.sample, slot.found)
            slot.found = None
            actor.held += 1
            self.pending[reference] = (actor, slot)

    def _collect(self) -> None:
        """Wait for the next result (or actor ready) and take it in."""
        ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=WAIT_S)
        for reference in ready:
            actor, slot = self.pending.pop(reference)
            value = self._value(reference, slot)
            if slot is None:
                self._started(actor, value)
            else:
                self._finished(actor, slot, value)

    def _value(self, reference: Any, slot: Slot | None) -> Any:
        exceptions = self.ray.exceptions
        doing = "starting" if slot is None else f"scoring sample {slot.sample.sample_id}"
        try:
            return self.ray.get(reference)
        except exceptions.RayActorError as exc:
            raise ClusterLost(
                f"a Ray actor died {doing}, past the {RESTARTS} restarts and retries Ray was "
                f"allowed: {_first_line(exc)}"
            ) from None
        except exceptions.RayTaskError as exc:  # the actor's own code raised: a bug
            cause = getattr(exc, "cause", None) or exc
            raise ClusterError(
                f"a Ray worker failed {doing}: {type(cause).__name__}: {_first_line(cause)}"
            ) from None
        except exceptions.RayError as exc:  # a node, a worker process or an object lost
            raise ClusterLost(
                f"the Ray cluster failed {doing}: {type(exc).__name__}: {_first_line(exc)}"
            ) from None

    def _started(self, actor: Actor, started: Started) -> None:
        if started.failure is not None:
            raise _failed(started.failure)
        actor.ready = True

    def _finished(self, actor: Actor, slot: Slot, finished: Finished) -> None:
        actor.held -= 1
        if finished.failure is not None or finished.result is None:
            raise _failed(finished.failure or Failure("a worker returned no result"))
        if self.cache is not None:
            keep_entries(self.cache, finished.entries)
        slot.result = finished.result
        earlier = [s.position for _, s in self.pending.values() if s is not None]
        self.overtaken += any(p < slot.position for p in earlier)

    def _stop(self) -> None:
        """Stop the actors; results that came back but were not handed on yet keep their
        cache entries, so that the next run answers them here."""
        try:
            if self.pending and self.cache is not None:
                done, _ = self.ray.wait(
                    list(self.pending), num_returns=len(self.pending), timeout=0
                )
                for reference in done:
                    if self.pending[reference][1] is None:
                        continue
                    try:
                        finished = self.ray.get(reference, timeout=0)
                    except Exception:
                        continue
                    keep_entries(self.cache, finished.entries)
        finally:
            if not self.connection.joined:
                # a cluster this process leaves at close() stops its actors itself, quietly
                for actor in self.actors:
                    self.ray.kill(actor.handle, no_restart=True)
            self.pending = {}

    def close(self) -> None:
        """Stop the actors and leave the cluster (the actors of a driver that leaves are
        stopped by Ray)."""
        try:
            self._stop()
        finally:
            self.connection.close()
            self.actors = []


def _failed(failure: Failure) -> ClusterError:
    return (WorkerUsageError if failure.usage else ClusterError)(failure.message)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
