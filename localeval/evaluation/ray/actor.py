"""What runs in a Ray worker process for `evaluate --ray` (driven by
localeval.evaluation.ray.driver).

A `SampleScorer` actor loads the run's judge and embedder once, after checking that they
are the driver's (each model file's sha256) and that it runs the driver's localeval (a
digest of the package's code: the same prompts and metrics), then scores one sample at a
time with the engine's `score_sample`. It answers what the driver's cache found for the
sample from memory and hands back, with the result, what its models added to the cache.
It never opens the driver's store. Errors of localeval's own come back as values
(`Failure`), so that the driver can say them in one line.

Ray itself is imported only where the actor needs it (its node's address).
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from localeval.config import ModelsConfig
from localeval.data.samples import Sample
from localeval.engine import score_sample
from localeval.errors import LocalevalError, UsageError, unrendered
from localeval.evaluation.ray.remote import Chosen, Entry, Found, WorkerTools
from localeval.metrics import Metric
from localeval.results.model import SampleResult

PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def code_digest() -> str:
    """A digest of localeval's own code here (every module of the package): two processes
    with the same digest ask the same prompts and compute the same metrics."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE).as_posix().encode())
        digest.update(b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class WorkerJob:
    """What every actor of a run is given: the models (models.toml as the driver read it,
    paths resolved there) and metrics, the threads each model may use, whether the driver
    keeps a cache, and what the driver's models and code are."""

    models: ModelsConfig
    chosen: Chosen
    metrics: list[Metric]
    threads: int
    cached: bool
    identities: dict[str, dict[str, object]]
    code: str


@dataclass(frozen=True)
class Failure:
    """An error of localeval's own in a worker: its message, and whether it was the user's
    to fix (a UsageError) rather than a failure (the driver raises it as the same kind)."""

    message: str
    usage: bool = False


@dataclass(frozen=True)
class Started:
    """An actor ready to score (`failure`: why it cannot), and where it runs."""

    where: str
    pid: int
    failure: Failure | None = None


@dataclass
class Finished:
    """One sample scored on a worker, with the cache entries its models made."""

    result: SampleResult | None
    entries: list[Entry] = field(default_factory=list)
    pid: int = 0
    failure: Failure | None = None


class SampleScorer:
    """The actor: one judge and embedder, one sample at a time."""

    def __init__(self, job: WorkerJob):
        import ray  # present in a Ray worker

        self.pid = os.getpid()
        self.where = f"node {ray.util.get_node_ip_address()} (pid {self.pid})"
        self.metrics = job.metrics
        self.worker: WorkerTools | None = None
        self.failure: Failure | None = None
        try:
            if code_digest() != job.code:
                raise UsageError(
                    f"the worker on {self.where} runs another localeval than the driver "
                    f"(code digest {code_digest()[:12]}, the driver's {job.code[:12]}): "
                    "install the same version on every node"
                )
            self.worker = WorkerTools(
                job.models, job.chosen, job.threads, job.cached, job.identities, self.where
            )
        except LocalevalError as exc:
            self.failure = Failure(unrendered(exc), isinstance(exc, UsageError))

    def started(self) -> Started:
        return Started(self.where, self.pid, self.failure)

    def score(self, sample: Sample, found: Found) -> Finished:
        if self.worker is None:
            return Finished(None, pid=self.pid, failure=self.failure)
        self.worker.begin(found)
        try:
            result = score_sample(sample, self.metrics, self.worker.tools)
        except LocalevalError as exc:  # e.g. a judge server that stopped answering
            message = f"on {self.where}, sample {sample.sample_id}: {exc}"
            failure = Failure(message, isinstance(exc, UsageError))
            return Finished(None, pid=self.pid, failure=failure)
        return Finished(result, self.worker.entries(), self.pid)
