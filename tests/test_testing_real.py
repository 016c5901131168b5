"""The pytest quality gate with the real default judge (slow: loads the judge once)."""

from __future__ import annotations

import pytest

from localeval.testing import ModelCache, assert_rag_quality

pytestmark = pytest.mark.real_models

CONTEXT = "The Team plan costs 12 euros per user per month and includes 2 TB of storage per user."
SAMPLES = [
    {
        "sample_id": "made-up",
        "question": "Where is the company's headquarters?",
        "contexts": [CONTEXT],
        "answer": "The headquarters are on the Moon, next to the hardware token factory.",
    },
    {
        "sample_id": "supported",
        "question": "How much does the Team plan cost?",
        "contexts": [CONTEXT],
        "answer": "The Team plan costs 12 euros per user per month.",
    },
]


def test_real_judge_gate_fails_then_reruns_from_the_cache() -> None:
    cache = ModelCache()
    try:
        with pytest.raises(AssertionError) as failure:
            assert_rag_quality(SAMPLES, {"faithfulness": 0.9}, ["faithfulness"], cache=cache)
        message = str(failure.value)
        assert message.startswith("RAG quality gates failed: 1 of 1 on the samples given")
        assert "Likely cause: the generator invents beyond the retrieved context." in message
        assert "    made-up: faithfulness " in message  # the invented answer is the worst
        # the same samples again: every judge call is answered by the persistent cache
        quality = assert_rag_quality(SAMPLES, {"faithfulness": 0.05}, ["faithfulness"], cache=cache)
        assert (quality.run.usage.judge_calls, quality.run.usage.cached_calls) == (0, 2)
        made_up, supported = (s.results["faithfulness"].score for s in quality.run.samples)
        assert made_up is not None and supported is not None and made_up < supported
    finally:
        cache.close()


def test_the_fast_judges_own_thresholds_pass_the_supported_answer_only() -> None:
    """the default 0.80 would fail both answers with the 0.5B judge (`fast`: its P(Yes) is
    compressed and uncalibrated); the thresholds in its models.toml entry tell them apart."""
    cache = ModelCache()
    try:
        made_up, supported = SAMPLES
        quality = assert_rag_quality(
            [supported], metrics=["faithfulness"], judge="fast", cache=cache
        )
        assert [g.threshold for g in quality.gates] == [0.56]
        with pytest.raises(AssertionError, match=r"below the threshold 0\.56"):
            assert_rag_quality([made_up], metrics=["faithfulness"], judge="fast", cache=cache)
    finally:
        cache.close()
