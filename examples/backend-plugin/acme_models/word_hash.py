"""Embedder backend `word-hash`: each word hashed into one of `dimensions` buckets, so texts
sharing words are similar. The entry point names this module, which declares
EMBEDDER_BACKEND, as localeval's own backend modules do."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from localeval.backends import ModelStatus, counted_setting
from localeval.judge import ModelIdentity

WORD = re.compile(r"\w+")


class WordHashEmbedder:
    def __init__(self, name: str, dimensions: int) -> None:
        self.name = name
        self.dimensions = dimensions

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(self.name, {"method": "word-hash"}, {"dimensions": self.dimensions})

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimensions))
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                bucket = int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimensions
                vectors[row, bucket] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)


class WordHashBackend:
    keys = frozenset({"dimensions"})
    cacheable = False

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> int:
        return counted_setting(table, "dimensions", where, 64, 1, "a number of dimensions")

    def identify(self, name: str, settings: int) -> ModelIdentity:
        return ModelIdentity(name, {"method": "word-hash"}, {"dimensions": settings})

    def load(self, name: str, settings: int) -> WordHashEmbedder:
        return WordHashEmbedder(name, settings)

    def status(self, settings: int) -> ModelStatus:
        return ModelStatus(None, "(no file)", "word hashing, no model")


EMBEDDER_BACKEND = WordHashBackend()
