"""Know the cost before you run: what a piece of work (an evaluation, `compare-answers`,
`generate`) will ask of the judge, and how long that takes on this machine, found without
evaluating anything. Each command's estimate runs its own code under `Counting`
(localeval.evaluation.estimate, localeval.pairwise.comparing, localeval.testset.questions).

The real metrics run against counting stand-ins (`load_tools(..., counting=True)`): the
judge backend's counter, which builds and tokenizes every prompt with the judge's own
code and counts what the judge would evaluate (localeval.backends.llama_count), and an
embedder that counts texts. Both sit behind the same cache the run would read, so a call
the cache answers is counted as cached, with the same keys; what the estimate would add
to the cache stays in memory (`PeekedCache`), so a prompt asked twice is a hit the second
time, as in the run, and nothing is written.

Where the count can differ from the run's: a counted verdict is neutral, so control flow
that follows the judge's answers follows a neutral one (of evaluate's metrics only the
claims do: a sentence's typical claim reply fails its checks, so the sentence is counted as
one statement, the fewest its claims can be; the windows of long contexts depend on token
counts only, and a noncommittal answer is still asked the same questions), and a generated
reply is a typical one, so generated tokens are an estimate (`notes` says so when there
are any). The time is the counted
work at the speed measured once per model and machine (localeval.estimate.speed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from localeval.closing import Closing
from localeval.config import ModelsConfig
from localeval.database import Database, Location, open_store
from localeval.embedder import EmbedderSpeed, TextCountingEmbedder
from localeval.estimate.speed import embedder_speed, judge_speed
from localeval.judge import (
    ClosableJudge,
    ConcurrentJudge,
    CountingJudge,
    JudgeSpeed,
    RestoringJudge,
    Usage,
)
from localeval.metrics import Metric, Tools
from localeval.tools import load_tools
from localeval.tools.cache import CachedJudge, CacheTables, JudgeEntry, VectorEntry

TYPICAL_REPLY_NOTE = (
    "generated tokens are counted for a typical reply (16 tokens in each string the judge "
    "writes): what the judge writes decides the real number"
)


class PeekedCache(CacheTables):
    """The run database's cache as the run would read it, with what is written to it kept
    in memory, read back with the rest and gone with it: the database itself is never
    written (nor locked) through it."""

    def __init__(self, connection: Database):
        super().__init__(connection)
        self._answers: dict[str, str] = {}
        self._vectors: dict[str, bytes] = {}
        self._dimensions: dict[str, int] = {}

    def answer(self, key: str) -> str | None:
        kept = self._answers.get(key)
        return kept if kept is not None else super().answer(key)

    def keep_answer(self, entry: JudgeEntry) -> None:
        self._answers[entry.key] = entry.value

    def vector(self, key: str) -> bytes | None:
        kept = self._vectors.get(key)
        return kept if kept is not None else super().vector(key)

    def keep_vector(self, entry: VectorEntry) -> None:
        self._vectors[entry.key] = entry.vector
        self._dimensions.setdefault(entry.embedder_sha256, len(entry.vector) // 4)  # float32

    def dimensions(self, embedder: str) -> int | None:
        stored = super().dimensions(embedder)
        return stored if stored is not None else self._dimensions.get(embedder)


@dataclass
class Work:
    """What part of a run asks of the models: the judge's usage, its steps (llama.cpp
    calls, or requests to a server) and the texts embedded."""

    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    embedded: int = 0
    #: shared prompt parts restored from kept context states, and their tokens (not read)
    restored: int = 0
    restored_tokens: int = 0

    def __add__(self, other: Work) -> Work:
        return Work(
            self.usage + other.usage,
            self.steps + other.steps,
            self.embedded + other.embedded,
            self.restored + other.restored,
            self.restored_tokens + other.restored_tokens,
        )

    def __sub__(self, other: Work) -> Work:
        return Work(
            self.usage - other.usage,
            self.steps - other.steps,
            self.embedded - other.embedded,
            self.restored - other.restored,
            self.restored_tokens - other.restored_tokens,
        )


def counted(tools: Tools) -> Work:
    """What the counting tools have counted so far."""
    judge, embedder = tools.judge, tools.embedder
    usage = judge.usage.snapshot() if judge is not None else Usage()
    counter = judge.inner if isinstance(judge, CachedJudge) else judge
    # a judge that counts no steps of its own (a fake) takes one per call
    steps = counter.steps if isinstance(counter, CountingJudge) else usage.judge_calls
    steps = steps if counter is not None else 0
    embedded = embedder.computed if isinstance(embedder, TextCountingEmbedder) else 0
    if isinstance(counter, RestoringJudge):
        return Work(usage, steps, int(embedded), counter.restored, counter.restored_tokens)
    return Work(usage, steps, int(embedded))


@dataclass(frozen=True)
class Pricing:
    """What work costs in seconds on this machine (a speed is None when unknown)."""

    judge: JudgeSpeed | None = None
    embedder: EmbedderSpeed | None = None
    #: samples in flight at once (a server judge's `concurrency`)
    concurrency: int = 1

    def known(self, work: Work) -> bool:
        """Whether the speeds this work needs are known."""
        return (self.judge is not None or not work.usage.judge_calls) and (
            self.embedder is not None or not work.embedded
        )

    def seconds(self, work: Work) -> float:
        """The work's time here, loading not included (0 for a model whose speed is unknown)."""
        seconds = 0.0
        if self.judge is not None:
            usage = work.usage
            judged = self.judge.seconds(work.steps, usage.prompt_tokens, usage.generated_tokens)
            seconds += judged / max(1, self.concurrency)
        if self.embedder is not None:
            seconds += self.embedder.seconds(work.embedded)
        return seconds

    def loading(self, work: Work) -> dict[str, float]:
        """Loading each model the work needs (a model the cache answers for is not loaded)."""
        loads = {}
        if self.judge is not None and work.usage.judge_calls:
            loads["judge"] = self.judge.load_seconds
        if self.embedder is not None and work.embedded:
            loads["embedder"] = self.embedder.load_seconds
        return loads


@dataclass
class Estimate:
    """What a run will cost: per part (metric) and in total, with the time on this machine.

    Each `Usage` has results.json's run.usage keys; its `seconds` are estimated. The
    total's seconds include loading the models (`loading`); `per_item` is each item's
    (sample's, by id) estimated seconds, loading counted with the first that needs it.
    """

    n_items: int
    parts: dict[str, Usage]
    usage: Usage
    loading: dict[str, float]
    per_item: dict[str, float]
    judge: str | None
    embedder: str | None
    pricing: Pricing
    #: whether every speed the work needs is known (else the seconds leave that work out)
    timed: bool
    #: how long counting took (nothing was evaluated)
    counting_seconds: float
    #: texts the embedder will embed (those the cache lacks)
    embedded: int = 0
    #: the judge's steps: llama.cpp calls, or requests to a server
    steps: int = 0
    notes: list[str] = field(default_factory=list)
    #: what an item and a part are ("sample", "metric"; "pair", "step")
    item: str = "sample"
    part: str = "metric"
    #: items that read some of their contexts from kept states, and the tokens they skip
    from_states: int = 0
    restored_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The estimate as --estimate --output writes it."""
        speed: dict[str, Any] = {}
        for name in ("judge", "embedder"):
            value = getattr(self.pricing, name)
            if value is not None:
                speed[name] = {f.name: round(getattr(value, f.name), 4) for f in fields(value)}
        return {
            "estimate": {
                f"n_{self.item}s": self.n_items,
                "judge": self.judge,
                "embedder": self.embedder,
                "usage": _usage_dict(self.usage),
                "judge_steps": self.steps,
                "embedded_texts": self.embedded,
                f"by_{self.part}": {name: _usage_dict(u) for name, u in self.parts.items()},
                "loading_seconds": {k: round(v, 3) for k, v in self.loading.items()},
                "timed": self.timed,
                "speed": speed,
                "counting_seconds": round(self.counting_seconds, 3),
                f"{self.item}s_from_states": self.from_states,
                "restored_prompt_tokens": self.restored_tokens,
                "notes": self.notes,
            }
        }


def _usage_dict(usage: Usage) -> dict[str, Any]:
    data = usage.as_dict()
    data.pop("retries", None)  # none are estimated
    return data


def priced(
    parts: dict[str, Work],
    items: dict[str, Work],
    tools: Tools,
    pricing: Pricing,
    counting_seconds: float,
    kinds: tuple[str, str] = ("sample", "metric"),
) -> Estimate:
    """The counted work in seconds: per part, per item and in total, loading included;
    `kinds`: what an item and a part are."""
    total = sum(parts.values(), Work())
    loading = pricing.loading(total)
    per_item, pending = {}, dict(loading)
    for item, work in items.items():
        seconds = pricing.seconds(work)
        # each model loads at its first miss
        if work.usage.judge_calls:
            seconds += pending.pop("judge", 0.0)
        if work.embedded:
            seconds += pending.pop("embedder", 0.0)
        per_item[item] = seconds
    usages = {}
    for name, work in parts.items():
        usages[name] = work.usage.snapshot()
        usages[name].seconds = pricing.seconds(work)
    usage = total.usage.snapshot()
    usage.retries = 0
    usage.seconds = pricing.seconds(total) + sum(loading.values())
    notes = [TYPICAL_REPLY_NOTE] if total.usage.generated_tokens else []
    return Estimate(
        n_items=len(items),
        parts=usages,
        usage=usage,
        loading=loading,
        per_item=per_item,
        judge=tools.judge.name if tools.judge is not None else None,
        embedder=tools.embedder.name if tools.embedder is not None else None,
        pricing=pricing,
        timed=pricing.known(total),
        counting_seconds=counting_seconds,
        embedded=total.embedded,
        steps=total.steps,
        notes=notes,
        item=kinds[0],
        part=kinds[1],
        from_states=sum(1 for work in items.values() if work.restored),
        restored_tokens=total.restored_tokens,
    )


def pricing_for(
    store: Database,
    models: ModelsConfig,
    tools: Tools,
    work: Work,
    judge_name: str | None,
    embedder_name: str | None,
    measure: bool,
) -> Pricing:
    """The speeds of the models this work needs: kept, else measured now when `measure`."""
    judge = embedder = None
    if tools.judge is not None and work.usage.judge_calls:
        judge = judge_speed(store, models.judge(judge_name), tools.judge.identity, measure)
    if tools.embedder is not None and work.embedded:
        config = models.embedder(embedder_name)
        embedder = embedder_speed(store, config, tools.embedder.identity, measure)
    concurrency = tools.judge.concurrency if isinstance(tools.judge, ConcurrentJudge) else 1
    concurrency = int(concurrency or 1)
    return Pricing(judge, embedder, concurrency)


class Counting(Closing):
    """One estimate's counting tools, over the cache as the run would read it (none with
    `use_cache` false), and what each part of each item cost; close it after."""

    def __init__(
        self,
        models: ModelsConfig,
        metrics: Sequence[Metric],
        judge: str | None,
        embedder: str | None,
        db: Location | None,
        use_cache: bool = True,
        parts: Sequence[str] = (),
        kinds: tuple[str, str] = ("sample", "metric"),
    ):
        self.started = time.perf_counter()
        self.models, self.judge_name, self.embedder_name = models, judge, embedder
        #: the run database: its cache peeked at, and where the models' speeds are kept
        self.store = open_store(db)
        try:
            cache = PeekedCache(self.store) if use_cache else None
            self.tools = load_tools(models, metrics, judge, embedder, cache, counting=True)
        except BaseException:
            self.store.close()
            raise
        self.parts: dict[str, Work] = {part: Work() for part in parts}
        self.kinds = kinds
        self.items: dict[str, Work] = {}

    def close(self) -> None:
        """Free the counting judge's vocabulary and the database connection."""
        judge = self.tools.judge
        counter = judge.inner if isinstance(judge, CachedJudge) else judge
        if isinstance(counter, ClosableJudge):
            counter.close()
        self.store.close()

    def count(self, item: str, part: str, work: Callable[[], object]) -> None:
        """Do `work` (metric code, with `tools`) and add what it asked of the models to the
        item's and the part's."""
        before = counted(self.tools)
        work()
        spent = counted(self.tools) - before
        self.parts[part] = self.parts.get(part, Work()) + spent
        self.items[item] = self.items.get(item, Work()) + spent

    def estimate(self, measure: bool = True) -> Estimate:
        """The work counted so far, priced; a model's speed not kept yet is measured now
        when `measure` (else its time is left out)."""
        counting_seconds = time.perf_counter() - self.started
        total = sum(self.items.values(), Work())
        pricing = pricing_for(
            self.store,
            self.models,
            self.tools,
            total,
            self.judge_name,
            self.embedder_name,
            measure,
        )
        return priced(self.parts, self.items, self.tools, pricing, counting_seconds, self.kinds)
