"""The embedder: what metrics may ask of an embedding model (see localeval.backends)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

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
    """Cosine similarity of two vectors (1.0 identical direction, 0.0 orthogonal)."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norm) if norm else 0.0
