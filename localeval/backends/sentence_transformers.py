"""Embedder backend "sentence-transformers" (the default): a local model folder.

The model is loaded once, from a local path only (with the Hugging Face libraries held
offline first: localeval.offline), and texts are embedded in batches, on the GPU when there is one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localeval.backends import ModelStatus, counted_setting, required_path, typed_setting
from localeval.backends.model_files import check_embedder_dir, require
from localeval.errors import ConfigError, ModelFileError
from localeval.judge import ModelIdentity
from localeval.offline import hold_offline

DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class SentenceTransformerSettings:
    """An embedder's models.toml entry: the folder, its weights file, where it runs."""

    path: Path
    weights: str = "model.safetensors"
    sha256: str | None = None
    device: str = "auto"
    batch_size: int = 64
    #: put before every text: what the model was trained to see ("query: " for the e5
    #: family on similarity tasks); part of the identity, since it changes every vector
    prefix: str = ""
    #: tokens per text the model reads (None: the model's own limit)
    max_length: int | None = None

    def vector_settings(self) -> dict[str, Any]:
        """What besides the weights changes the vectors (nothing, for the defaults)."""
        found: dict[str, Any] = {}
        if self.prefix:
            found["prefix"] = self.prefix
        if self.max_length is not None:
            found["max_length"] = self.max_length
        return found


def resolve_device(requested: str) -> str:
    """'cuda' when asked for or when 'auto' finds a GPU; otherwise 'cpu'."""
    if requested == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if requested == "cuda":
        raise ModelFileError("embedder device 'cuda' requested but no CUDA GPU is available")
    return "cpu"


def verified_identity(name: str, settings: SentenceTransformerSettings) -> ModelIdentity:
    """The embedder's identity (its weights' sha256), after checking its folder;
    ModelFileError if it is unusable."""
    sha256 = require(
        check_embedder_dir(settings.path, settings.weights, settings.sha256),
        f"embedder '{name}'",
        "Run scripts/setup.sh to provision it, or fix its path in models.toml.",
    )
    return ModelIdentity(name, {"sha256": sha256}, settings.vector_settings())


class SentenceTransformerEmbedder:
    """An Embedder backed by sentence-transformers, loaded from a local folder."""

    def __init__(self, name: str, settings: SentenceTransformerSettings):
        self.identity = verified_identity(name, settings)
        hold_offline()  # before the libraries below are imported: they read the switches once
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # its bars would garble our own progress
        self.name = name
        self.batch_size = settings.batch_size
        self.device = resolve_device(settings.device)
        self._model = SentenceTransformer(
            str(settings.path), device=self.device, local_files_only=True
        )
        if settings.max_length is not None:
            self._model.max_seq_length = settings.max_length
        self.prefix = settings.prefix

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(
            [self.prefix + text for text in texts],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def _positive(value: int | None, where: str) -> int | None:
    if value is not None and value < 1:
        raise ConfigError(f"{where}: 'max_length' must be at least 1, got {value}")
    return value


class SentenceTransformersBackend:
    keys = frozenset({"path", "weights", "sha256", "device", "batch_size", "prefix", "max_length"})
    cacheable = True

    def settings(
        self, table: Mapping[str, Any], where: str, base: Path
    ) -> SentenceTransformerSettings:
        path = required_path(table, where, base)
        device = typed_setting(table, "device", str, where, "auto")
        if device not in DEVICES:
            raise ConfigError(f"{where}: 'device' must be auto, cpu or cuda, got {device!r}")
        return SentenceTransformerSettings(
            path=path,
            weights=typed_setting(table, "weights", str, where, "model.safetensors"),
            sha256=typed_setting(table, "sha256", str, where),
            device=device,
            batch_size=counted_setting(table, "batch_size", where, 64, 1, "a number of texts"),
            prefix=typed_setting(table, "prefix", str, where, ""),
            max_length=_positive(typed_setting(table, "max_length", int, where), where),
        )

    def identify(self, name: str, settings: SentenceTransformerSettings) -> ModelIdentity:
        return verified_identity(name, settings)

    def load(self, name: str, settings: SentenceTransformerSettings) -> SentenceTransformerEmbedder:
        return SentenceTransformerEmbedder(name, settings)

    def status(self, settings: SentenceTransformerSettings) -> ModelStatus:
        check = check_embedder_dir(settings.path, settings.weights, settings.sha256)
        return ModelStatus(check.problem, str(settings.path), f"device {settings.device}")


EMBEDDER_BACKEND = SentenceTransformersBackend()
