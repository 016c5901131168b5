"""The judge and embedding cache: never ask twice, load models only on a miss; on an SQLite
file and on a PostgreSQL database."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from fakes import FakeEmbedder, ScriptedJudge
from run_db import Connections, as_setting
from standins import StandIns

from localeval.cli import main
from localeval.config import load_models_config
from localeval.database import Location, open_store
from localeval.judge import ModelIdentity, Prompt
from localeval.metrics import build_metric
from localeval.schema import Array, Object, Str
from localeval.tools import cached_tools
from localeval.tools.cache import CachedEmbedder, CachedJudge, cache_stats

pytestmark = pytest.mark.both_stores

PROMPT = Prompt.of("system", "Context:", "\nchunk", "\n\nDoes it say so?")


class Loader:
    """Builds the inner judge and counts how often it was asked to."""

    def __init__(self, judge: ScriptedJudge):
        self.judge = judge
        self.loads = 0

    def __call__(self) -> ScriptedJudge:
        self.loads += 1
        return self.judge


def cached_judge(
    db: Location, answers: list[object], settings: dict[str, object] | None = None
) -> tuple[CachedJudge, Loader]:
    loader = Loader(ScriptedJudge(answers))
    connection = open_store(db)
    identity = ModelIdentity("j", {"sha256": "a" * 64}, settings or {"batch_size": 512})
    judge = CachedJudge(identity, loader, connection)
    return judge, loader


def test_second_identical_call_is_answered_from_cache(db: Location) -> None:
    judge, loader = cached_judge(db, [0.75])
    assert judge.yes_probability(PROMPT) == 0.75
    assert judge.yes_probability(PROMPT) == 0.75  # the script has no second answer
    assert judge.usage.judge_calls == 1 and judge.usage.cached_calls == 1
    assert loader.loads == 1


def test_cache_survives_a_new_process_and_needs_no_model(db: Location) -> None:
    first, _ = cached_judge(db, [0.75])
    first.yes_probability(PROMPT)
    second, loader = cached_judge(db, [])
    assert second.yes_probability(PROMPT) == 0.75
    assert loader.loads == 0  # a fully cached run never loads the model
    assert second.usage.judge_calls == 0 and second.usage.cached_calls == 1


def test_any_change_in_the_prompt_or_settings_asks_again(db: Location) -> None:
    judge, _ = cached_judge(db, [0.1, 0.2, 0.3])
    judge.yes_probability(PROMPT)
    assert (
        judge.yes_probability(Prompt.of("system", "Context:", "\nchunk!", "\n\nDoes it say so?"))
        == 0.2
    )
    # the same text cut into other segments is evaluated differently: a different call
    assert (
        judge.yes_probability(Prompt.of("system", "Context:\nchunk", "\n\nDoes it say so?")) == 0.3
    )
    other_settings, _ = cached_judge(db, [0.4], settings={"batch_size": 64})
    assert other_settings.yes_probability(PROMPT) == 0.4


def test_generate_and_choices_are_cached_by_schema_and_options(db: Location) -> None:
    schema = Object((("questions", Array(Str(20), 1, 1)),))
    judge, _ = cached_judge(db, [{"questions": ["Q?"]}, [0.3, 0.7], [0.5, 0.5]])
    assert judge.generate(PROMPT, schema) == {"questions": ["Q?"]}
    assert judge.generate(PROMPT, schema) == {"questions": ["Q?"]}
    assert judge.choice_probabilities(PROMPT, ["A", "B"]) == [0.3, 0.7]
    assert judge.choice_probabilities(PROMPT, ["A", "B"]) == [0.3, 0.7]
    assert judge.choice_probabilities(PROMPT, ["B", "A"]) == [0.5, 0.5]
    stats = cache_stats(open_store(db))
    assert stats.judge_entries == {"generate": 1, "choice_probabilities": 2}


def test_embeddings_are_cached_and_misses_batched(db: Location) -> None:
    inner = FakeEmbedder()
    loads: list[int] = []

    def load() -> FakeEmbedder:
        loads.append(1)
        return inner

    identity = ModelIdentity("e", {"sha256": "b" * 64})
    embedder = CachedEmbedder(identity, load, open_store(db))
    first = embedder.embed(["alpha beta", "gamma"])
    second = embedder.embed(["gamma", "delta", "alpha beta"])
    assert inner.calls == [["alpha beta", "gamma"], ["delta"]]  # only the miss, in one batch
    np.testing.assert_allclose(second[0], first[1])
    np.testing.assert_allclose(second[2], first[0])
    assert loads == [1]
    assert (embedder.cached, embedder.computed) == (2, 3)


def test_cached_tools_close_their_connection_after_the_block_however_it_ends(
    stand_ins: StandIns, opened_connections: Connections
) -> None:
    stand_ins.use(ScriptedJudge([]))
    models, metrics = load_models_config(), [build_metric("faithfulness")]
    with cached_tools(models, metrics) as tools:
        assert tools.judge is not None
        assert len(opened_connections.still_open()) == 1
    with pytest.raises(KeyError), cached_tools(models, metrics):
        raise KeyError("the work failed")
    assert len(opened_connections) == 2 and opened_connections.still_open() == []
    with cached_tools(models, metrics, use_cache=False):
        assert len(opened_connections) == 2  # no cache, no database opened


def test_cache_commands(db: Location, opened_connections: Connections) -> None:
    judge, _ = cached_judge(db, [0.5])
    judge.yes_probability(PROMPT)
    result = CliRunner().invoke(main, ["cache", "stats"])
    assert result.exit_code == 0
    assert (
        "judge calls cached: 1 (yes_probability: 1), from 1 judge model; prompt length checks "
        "cached: 0"
    ) in result.stdout
    result = CliRunner().invoke(main, ["cache", "clear", "--yes"])
    assert result.exit_code == 0
    assert (
        result.stdout == "Deleted 1 cached judge calls, 0 cached embeddings and 0 context states.\n"
    )
    assert "judge calls cached: 0 (none)" in CliRunner().invoke(main, ["cache", "stats"]).stdout
    assert len(opened_connections) == 3 and opened_connections.still_open() == []


def test_cache_commands_take_db(another_database: Location) -> None:
    judge, _ = cached_judge(another_database, [0.5])  # not in $LOCALEVAL_DB's
    judge.yes_probability(PROMPT)
    db = as_setting(another_database)
    result = CliRunner().invoke(main, ["cache", "stats", "--db", db])
    assert result.exit_code == 0
    assert result.stdout.startswith(f"database: {db}\n")
    assert "judge calls cached: 1 (yes_probability: 1)" in result.stdout
    result = CliRunner().invoke(main, ["cache", "clear", "--yes", "--db", db])
    assert (
        result.stdout == "Deleted 1 cached judge calls, 0 cached embeddings and 0 context states.\n"
    )


def test_window_checks_are_cached_but_not_counted_as_judge_calls(db: Location) -> None:
    judge, _ = cached_judge(db, [0.5])
    assert judge.fits(PROMPT) and judge.fits(PROMPT)
    judge.yes_probability(PROMPT)
    judge.yes_probability(PROMPT)
    assert judge.usage.cached_calls == 1


def test_a_call_and_its_length_check_count_as_one_judge_call(db: Location) -> None:
    """A verdict asks the judge once; whether its prompt fits is tokenization, cached beside
    it but never counted as a call, in `cache stats` as in `cache clear`."""
    judge, _ = cached_judge(db, [0.5])
    assert judge.fits(PROMPT)
    judge.yes_probability(PROMPT)
    stats = CliRunner().invoke(main, ["cache", "stats"])
    assert stats.exit_code == 0, stats.output
    assert (
        "judge calls cached: 1 (yes_probability: 1), from 1 judge model; prompt length "
        "checks cached: 1\n"
    ) in stats.stdout
    cleared = CliRunner().invoke(main, ["cache", "clear", "--yes"])
    assert cleared.stdout.startswith("Deleted 1 cached judge calls, 0 cached embeddings")
