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
    embedder_backend,
    judge_backend,
)
from localeval.backends.openai import OpenAISettings
from localeval.engine import InFlight, Sequential, sample_tools, scheduler_for
from localeval.judge import CancellableJudge, ConcurrentJudge, Judge, JudgeWithSessions
from localeval.metrics import EmbedsByLanguage, Tools, build_metric
from localeval.tools.cache import CachedJudge

ROOT = Path(__file__).resolve().parent.parent / "localeval"
#: the modules that once found these abilities by getattr or hasattr
ASKING = ["engine.py", "tools/cache.py", "tools/__init__.py", "estimate/speed.py"]
ABILITIES = "concurrency|session|cancel|counter|measure|embeds_in"


def test_no_ability_is_found_by_getattr() -> None:
    pattern = re.compile(rf"(getattr|hasattr)\([^)]*\"({ABILITIES})\"")
    for module in [*ASKING, "evaluation/run.py"]:
        assert not pattern.search((ROOT / module).read_text(encoding="utf-8")), module


def test_the_built_in_backends_declare_what_they_can_do() -> None:
    for name in ("llama-cpp", "openai", "fake"):
        backend = judge_backend(name)
        assert isinstance(backend, CountingBackend) and isinstance(backend, MeasuringBackend)
    for name in ("sentence-transformers", "fake"):
        assert not isinstance(embedder_backend(name), CountingBackend)


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
