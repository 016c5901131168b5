"""Sentence embeddings from a local sentence-transformers model folder.

The model is loaded once, from a local path only (the package forces the Hugging Face
libraries offline), and texts are embedded in batches.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.backends.files import verified_embedder_sha256
from localeval.config import EmbedderConfig
from localeval.errors import ModelFileError


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


class SentenceTransformerEmbedder:
    """An Embedder backed by sentence-transformers, loaded from a local folder."""

    def __init__(self, config: EmbedderConfig):
        self.sha256 = verified_embedder_sha256(config)
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # its bars would garble our own progress
        self.name = config.name
        self.batch_size = config.batch_size
        self.device = resolve_device(config.device)
        self._model = SentenceTransformer(
            str(config.path), device=self.device, local_files_only=True
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
