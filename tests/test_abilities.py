"""Optional abilities are declared as protocols (localeval.judge, localeval.backends,
localeval.metrics.base), not found by getattr: the built-in judges, backends and metrics
declare what they can do, and a plugin's judge gets samples in flight by declaring it."""

from __future__ import annotations

import re
from pathlib import Path

from fakes import FakeEmbedder, HashJudge

from localeval.backends import (
    ConcurrentSettings,
    CountingBackend,
    MeasuringBackend,
    ThreadedSettings,
    embedder_backend,
    judge_backend,
)
from localeval.backends.llama_judge import LlamaCppSettings
from localeval.backends.openai import OpenAISettings
from localeval.embedder import CountingEmbedder, TextCountingEmbedder
from localeval.engine import InFlight, Sequential, sample_tools, scheduler_for
from localeval.estimate.counting import counted
from localeval.judge import (
    CancellableJudge,
    ClosableJudge,
    ConcurrentJudge,
    CountingJudge,
    Judge,
    JudgeWithSessions,
    Prompt,
)
from localeval.metrics import EmbedsByLanguage, Tools, build_metric
from localeval.tools.cache import CachedJudge

ROOT = Path(__file__).resolve().parent.parent / "localeval"
#: the modules that once found these abilities by getattr or hasattr
ASKING = [
    "engine.py",
    "tools/cache.py",
    "tools/__init__.py",
    "estimate/speed.py",
    "estimate/counting.py",
    "estimate/division.py",
    "evaluation/estimate.py",
]
ABILITIES = "concurrency|session|cancel|counter|measure|embeds_in|steps|computed|close|threads"


def test_no_ability_is_found_by_getattr() -> None:
    pattern = re.compile(rf"(getattr|hasattr)\([^)]*\"({ABILITIES})\"")
    for module in [*ASKING, "evaluation/scoring.py", "evaluation/checks.py"]:
        assert not pattern.search((ROOT / module).read_text(encoding="utf-8")), module


def test_the_built_in_backends_declare_what_they_can_do() -> None:
    for name in ("llama-cpp", "openai", "fake"):
        backend = judge_backend(name)
        assert isinstance(backend, CountingBackend) and isinstance(backend, MeasuringBackend)
    for name in ("sentence-transformers", "fake"):
        assert not isinstance(embedder_backend(name), CountingBackend)


def test_a_gguf_judges_settings_say_its_threads_and_a_servers_do_not() -> None:
    settings = LlamaCppSettings(path=Path("judge.gguf"), threads=6)
    assert isinstance(settings, ThreadedSettings) and settings.threads == 6
    server = OpenAISettings(base_url="http://127.0.0.1:9/v1", model="m", concurrency=4)
    assert not isinstance(server, ThreadedSettings)


def test_a_server_judges_settings_allow_samples_in_flight() -> None:
    settings = OpenAISettings(base_url="http://127.0.0.1:9/v1", model="m", concurrency=4)
    assert isinstance(settings, ConcurrentSettings) and settings.concurrency == 4
    assert not isinstance(
        judge_backend("fake").settings({}, "models.toml", ROOT), ConcurrentSettings
    )


def test_the_cached_judge_has_sessions_and_cancels() -> None:
    cached = CachedJudge(HashJudge().identity, HashJudge, None, concurrency=4)
    assert isinstance(cached, ConcurrentJudge) and isinstance(cached, CancellableJudge)
    assert isinstance(cached.session(), JudgeWithSessions)


def test_context_precision_says_which_languages_it_embeds() -> None:
    metric = build_metric("context_precision")
    assert isinstance(metric, EmbedsByLanguage)
    assert metric.embeds_in("en") and not metric.embeds_in("zh")
    assert not isinstance(build_metric("faithfulness"), EmbedsByLanguage)


class SessionJudge(HashJudge):
    """A plugin's judge with sessions and a cancel, and `concurrency` samples in flight."""

    def __init__(self, concurrency: int) -> None:
        super().__init__()
        self.concurrency = concurrency
        self.cancelled = 0

    def session(self) -> Judge:
        return SessionJudge(self.concurrency)

    def cancel(self) -> None:
        self.cancelled += 1


class NoSessions(HashJudge):
    concurrency = 4


def test_samples_are_in_flight_only_for_a_judge_that_declares_sessions() -> None:
    embedder = FakeEmbedder()
    in_flight = scheduler_for(Tools(judge=SessionJudge(3), embedder=embedder))
    assert isinstance(in_flight, InFlight) and in_flight.concurrency == 3
    assert in_flight.on_stop is not None
    for judge in (SessionJudge(1), NoSessions(), HashJudge(), None):
        tools = Tools(judge=judge, embedder=embedder)
        assert isinstance(scheduler_for(tools), Sequential)
        assert sample_tools(tools) is tools
    parent = SessionJudge(2)
    tools = Tools(judge=parent, embedder=embedder)
    assert sample_tools(tools).judge is not parent


class StepCountingJudge(HashJudge):
    """A counting stand-in that counts its own steps (as a llama.cpp judge's batches)."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = 7

    def close(self) -> None:
        self.steps = 0


def test_an_estimate_reads_the_steps_and_texts_that_stand_ins_declare() -> None:
    counting_embedder = CountingEmbedder(FakeEmbedder().identity)
    counting_embedder.embed(["one", "two", "three"])
    assert isinstance(StepCountingJudge(), CountingJudge)
    assert isinstance(StepCountingJudge(), ClosableJudge)
    assert isinstance(counting_embedder, TextCountingEmbedder)
    work = counted(Tools(judge=StepCountingJudge(), embedder=counting_embedder))
    assert (work.steps, work.embedded) == (7, 3)
    # a judge that counts no steps of its own takes one per call; an embedder that counts
    # nothing embedded nothing the estimate can see
    judge = HashJudge()
    assert not isinstance(judge, CountingJudge)
    judge.yes_probability(Prompt.of("system", "is it so?"))
    judge.yes_probability(Prompt.of("system", "and this?"))
    work = counted(Tools(judge=judge, embedder=FakeEmbedder()))
    assert (work.steps, work.embedded) == (judge.usage.judge_calls, 0)
