"""The embedder: what metrics may ask of an embedding model (see localeval.backends)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from localeval.judge import ModelIdentity


class Embedder(Protocol):
    """Turns texts into unit-length vectors."""

    name: str

    @property
    def identity(self) -> ModelIdentity:
        """Which model this is (recorded with every run, and the key of its cache)."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, each L2-normalised."""
        ...


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (1.0 identical direction, 0.0 orthogonal), within
    [-1, 1]: float32 rounding puts a vector's similarity to itself at 1.00000007, and a score
    made of it would be outside [0, 1]."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return min(1.0, max(-1.0, float(np.dot(a, b) / norm))) if norm else 0.0


@runtime_checkable
class TextCountingEmbedder(Protocol):
    """An embedder that counts the texts it embedded itself (`computed`: those no cache
    answered), as an estimate reads them."""

    computed: int


@dataclass(frozen=True)
class EmbedderSpeed:
    """How fast an embedder works on one machine, measured there once (localeval.estimate.speed)."""

    texts_per_s: float
    #: loading the model before the first text (the library and the weights)
    load_seconds: float = 0.0

    def seconds(self, texts: int) -> float:
        """What embedding that many texts takes, loading not included."""
        return texts / self.texts_per_s


class CountingEmbedder:
    """Stands in for an embedder while an estimate counts what it would embed (`computed`
    texts), and loads no model. Its vectors are `like`'s (a cheap embedder whose vectors
    tell texts apart, so that work which picks texts by their similarity, as `generate`
    picks chunks, picks about as it would), else the same unit vector for every text."""

    def __init__(self, identity: ModelIdentity, like: Embedder | None = None, dimensions: int = 8):
        self.identity = identity
        self.name = identity.name
        self.computed = 0
        self._like = like
        self._vector = np.eye(1, dimensions, dtype=np.float32)[0]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.computed += len(texts)
        if self._like is not None:
            return self._like.embed(texts)
        return np.tile(self._vector, (len(texts), 1))
