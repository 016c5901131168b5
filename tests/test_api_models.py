"""The models, the state cache and the install's checks as calls (localeval.api.models):
what `localeval models`, `cache stats|clear` and `doctor` print is read from these."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
from fakes import ScriptedJudge

import localeval
from localeval.database import Location, open_store
from localeval.errors import ConfigError, ModelFileError
from localeval.judge import ModelIdentity, Prompt
from localeval.tools.cache import CachedJudge

PROMPT = Prompt.of("system", "Context:", "\nchunk", "\n\nDoes it say so?")

MODELS = """default_judge = "small"
[judge_aliases]
fast = "small"
quick = "small"
[judges.small]
backend = "fake"
[judges.small.thresholds]
faithfulness = 0.56
[judges.big]
path = "big.gguf"
[embedders.e]
backend = "fake"
"""


def write(folder: Path, text: str) -> Path:
    path = folder / "models.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_list_models_says_of_each_entry_whether_it_is_usable(tmp_path: Path) -> None:
    listed = localeval.list_models(write(tmp_path, MODELS))
    assert listed.source == tmp_path / "models.toml"
    small, big = listed.judges
    assert (small.name, small.kind, small.backend, small.default) == (
        "small",
        "judge",
        "fake",
        True,
    )
    assert small.ok and small.aliases == ("fast", "quick")
    assert small.thresholds == {"faithfulness": 0.56} and small.calibrated == ()
    assert small.prompts is not None
    # a llama.cpp judge whose file is not there: the entry says so, nothing raises
    assert not big.ok and not big.default and big.backend == "llama-cpp"
    assert big.location.endswith("big.gguf") and big.problem
    [embedder] = listed.embedders
    assert embedder.ok and embedder.default and embedder.prompts is None
    assert listed.problems == [big] and not listed.ok


def test_check_models_raises_naming_each_entry_that_cannot_be_used(tmp_path: Path) -> None:
    path = write(tmp_path, MODELS)
    with pytest.raises(ModelFileError, match=r"judge big: ") as raised:
        localeval.check_models(path)
    assert "small" not in str(raised.value)
    fine = write(tmp_path, MODELS.replace('path = "big.gguf"', 'backend = "fake"'))
    assert localeval.check_models(fine).ok


def test_a_models_file_that_is_not_there_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        localeval.list_models(tmp_path / "none.toml")


def cache_one_call(db: Location) -> None:
    identity = ModelIdentity("j", {"sha256": "a" * 64}, {"batch_size": 512})
    with open_store(db) as connection:
        CachedJudge(identity, lambda: ScriptedJudge([0.5]), connection).yes_probability(PROMPT)


def test_state_cache_stats_and_clear(db: Location) -> None:
    cache = localeval.StateCache()  # the default database: $LOCALEVAL_DB, the test's
    assert cache.db == db
    cache_one_call(db)
    found = cache.stats()
    assert found.cache is not None and found.cache.judge_entries == {"yes_probability": 1}
    assert found.states.entries == 0
    assert found.lines()[0] == f"database: {db}"
    cleared = cache.clear()
    assert (cleared.judge_calls, cleared.embeddings, cleared.states) == (1, 0, 0)
    after = cache.stats().cache
    assert after is not None and after.judge_entries == {}


def test_looking_at_or_clearing_a_cache_not_made_creates_nothing(tmp_path: Path) -> None:
    cache = localeval.StateCache(tmp_path / "runs" / "none.db")
    found = cache.stats()
    assert found.cache is None
    assert "nothing cached: the database does not exist yet" in found.lines()
    assert cache.clear().judge_calls == 0
    assert list(tmp_path.iterdir()) == []


def test_check_install_with_the_fake_models_holds_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    models = write(tmp_path, MODELS.replace('path = "big.gguf"', 'backend = "fake"'))
    found = localeval.check_install(models, db=tmp_path / "history" / "h.db")
    assert found.ok and found.failed == []
    assert {"judge small", "judge big", "embedder e", "run history"} <= {
        check.name for check in found.checks
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models.toml"]
    missing = localeval.check_install(tmp_path / "none.toml")
    assert not missing.ok and missing.failed[0].name == "models.toml"


def test_no_module_of_the_api_is_also_a_function() -> None:
    """`localeval.api.models` stays the module (the function is list_models), and the
    install's checks are not named like the module localeval.doctor."""
    for name in ("models", "testsets", "pairs"):
        module = importlib.import_module(f"localeval.api.{name}")
        assert isinstance(getattr(localeval.api, name), ModuleType), name
        assert module.__name__ == f"localeval.api.{name}"
    assert callable(localeval.check_install)
