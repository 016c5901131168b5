"""The test's own judge and embedder, picked by name: registered as the backends
"stand-in-judge" and "stand-in-embedder" (as a plugin registers its own), and named by a
models.toml whose default judge and embedder use them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localeval.backends import (
    register_embedder_backend,
    register_judge_backend,
    unregister_backend,
)
from localeval.backends.fake import StandIn
from localeval.config import load_models_config

JUDGE, EMBEDDER = "stand-in-judge", "stand-in-embedder"
PROJECT_MODELS = Path(__file__).resolve().parent.parent / "models.toml"


class Forbidden:
    """A model that must not be touched: identifying or loading it fails the test."""

    def __init__(self, message: str):
        self.message = message

    @property
    def identity(self) -> Any:
        raise AssertionError(self.message)


class Refusing(StandIn):
    def load(self, name: str, settings: None) -> Any:
        if isinstance(self.model, Forbidden):
            raise AssertionError(self.model.message)
        return super().load(name, settings)


def models_toml(
    thresholds: str = "", judge: str = "j", embedder: str = "e", prompts: str | None = None
) -> str:
    """A models.toml whose judge and embedder are the stand-ins."""
    text = f'[judges."{judge}"]\nbackend = "{JUDGE}"\n'
    if prompts is not None:
        text += f'prompts = "{prompts}"\n'
    if thresholds:
        text += f'[judges."{judge}".thresholds]\n{thresholds}\n'
    return text + f'[embedders."{embedder}"]\nbackend = "{EMBEDDER}"\n'


class StandIns:
    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch):
        self.judge = Refusing()
        self.embedder = Refusing()
        register_judge_backend(JUDGE, self.judge)
        register_embedder_backend(EMBEDDER, self.embedder)
        self._monkeypatch = monkeypatch
        # the project's default judge and embedder, with their thresholds and prompt set,
        # played by the stand-ins: only the answers differ
        project = load_models_config(PROJECT_MODELS)
        default = project.judge()
        thresholds = "\n".join(f"{m} = {v}" for m, v in default.thresholds.items())
        self.models = folder / "stand-ins.toml"
        self.models.write_text(
            models_toml(thresholds, default.name, project.embedder().name, default.prompts),
            encoding="utf-8",
        )

    def use(self, judge: Any = None, embedder: Any = None) -> Any:
        """Make the stand-ins hand out these models, and models.toml name them."""
        self.judge.model, self.embedder.model = judge, embedder
        self._monkeypatch.setenv("LOCALEVAL_MODELS", str(self.models))
        return judge

    def forbid(self, message: str = "models must not be loaded") -> None:
        """Fail the test if a model is identified or loaded."""
        self.use(Forbidden(message), Forbidden(message))

    def close(self) -> None:
        unregister_backend(JUDGE)
        unregister_backend(EMBEDDER)
