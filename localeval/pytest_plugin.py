"""pytest plugin (registered through the `pytest11` entry point): the `rag_quality` fixture.

    def test_rag_quality(rag_quality):
        rag_quality("tests/rag_samples.jsonl", thresholds={"faithfulness": 0.85})

The fixture calls localeval.testing.assert_rag_quality with a model cache shared by the
whole test session, so the judge and embedder load once however many checks use them. A
project's conftest.py may override `localeval_model_cache` (e.g. with test doubles).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from localeval.testing import DataArg, ModelCache, QualityRun, assert_rag_quality


class RagQuality:
    """The `rag_quality` fixture's value: call it like assert_rag_quality (without cache)."""

    def __init__(self, cache: ModelCache):
        self.cache = cache

    def __call__(
        self,
        data: DataArg,
        thresholds: Mapping[str, float] | None = None,
        metrics: Sequence[str] | None = None,
        **options: Any,
    ) -> QualityRun:
        __tracebackhide__ = True
        return assert_rag_quality(data, thresholds, metrics, cache=self.cache, **options)


@pytest.fixture(scope="session")
def localeval_model_cache() -> Iterator[ModelCache]:
    """The judges and embedders loaded for this test session."""
    cache = ModelCache()
    yield cache
    cache.close()


@pytest.fixture
def rag_quality(localeval_model_cache: ModelCache) -> RagQuality:
    """Evaluate a dataset and fail the test, naming each failing gate and its remedies,
    unless every quality gate passes. Returns the run (scores, gates) when it passes."""
    return RagQuality(localeval_model_cache)
