"""`--estimate` for a run whose contexts are kept as states on disk: how many samples will
read them from there, and their tokens left out of the prompt tokens (a fake counter that
restores, as the llama.cpp judge's counter does: localeval.backends.llama_count)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakes import KEPT_WORD, RestoringHashJudge

from localeval.backends import register_judge_backend, unregister_backend
from localeval.backends.fake import FakeJudgeBackend, FakeJudgeSettings
from localeval.cli import main
from localeval.judge import ModelIdentity

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"
BACKEND = "restoring-fake"


class RestoringBackend(FakeJudgeBackend):
    cacheable = True

    def identify(self, name: str, settings: FakeJudgeSettings) -> ModelIdentity:
        return ModelIdentity(name, {"sha256": RestoringHashJudge.sha256})

    def counter(self, name: str, settings: FakeJudgeSettings) -> RestoringHashJudge:
        judge = RestoringHashJudge()
        judge.name = name
        return judge


@pytest.fixture
def backend() -> Iterator[None]:
    register_judge_backend(BACKEND, RestoringBackend())
    yield
    unregister_backend(BACKEND)


def estimate(tmp_path: Path, name: str) -> tuple[Any, str]:
    models = tmp_path / "models.toml"
    models.write_text(
        f'[judges.j]\nbackend = "{BACKEND}"\n[embedders.e]\nbackend = "fake"\n', encoding="utf-8"
    )
    out = tmp_path / f"{name}.json"
    args = ["evaluate", str(DEMO), "--models", str(models), "--estimate", "-o", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))["estimate"], result.output


def test_the_estimate_says_how_many_samples_read_their_contexts_from_states(
    tmp_path: Path, backend: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept, text = estimate(tmp_path, "kept")
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]
    holding = [r for r in rows if any(KEPT_WORD in c for c in r["contexts"])]
    assert 0 < len(holding) < len(rows)
    assert kept["samples_from_states"] == len(holding)
    assert kept["restored_prompt_tokens"] > 0
    assert (
        f"{len(holding)} of {len(rows)} samples read their contexts from kept states: "
        f"{kept['restored_prompt_tokens']:,} prompt tokens not read again"
    ) in text
    # the same estimate with nothing kept: the restored tokens are what it reads more
    monkeypatch.setattr("fakes.KEPT_WORD", "no sample holds this word")
    cold, cold_text = estimate(tmp_path, "cold")
    assert cold["samples_from_states"] == 0 and "kept states" not in cold_text
    read = cold["usage"]["prompt_tokens"] - kept["usage"]["prompt_tokens"]
    assert read == kept["restored_prompt_tokens"]
