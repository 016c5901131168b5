"""The counting judge counts what the llama.cpp judge evaluates: the same calls, prompt
tokens and llama.cpp calls, on a real model (the small plumbing one), with a window small
enough that long contexts are split and a batch small enough that segments take several
llama.cpp calls; the metrics are the RAG ones, the rubric and answer correctness."""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import pytest

from localeval.backends.fake import HashEmbedder
from localeval.backends.llama_count import SMALL_CALLS, CountingLlamaJudge, measure_speed
from localeval.backends.llama_judge import LlamaJudge, batches
from localeval.config import load_models_config
from localeval.data.samples import load_samples
from localeval.engine import evaluate
from localeval.judge import Usage
from localeval.metrics import DEFAULT_METRICS, Tools

pytestmark = pytest.mark.real_models

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"
METRICS = [*DEFAULT_METRICS, "rubric", "answer_correctness"]


class DecodesCounted(LlamaJudge):
    """The real judge, counting its llama.cpp calls."""

    def __init__(self, *args: Any):
        super().__init__(*args)
        self.decodes = 0

    def _decode(self, tokens: tuple[int, ...], logits: bool) -> None:
        self.decodes += len(batches(tokens, self._llm.n_batch))
        super()._decode(tokens, logits)


def run(judge: LlamaJudge) -> Usage:
    samples = load_samples(DEMO)[:4]
    # chunks long for a 1,200-token window: they are judged window by window
    first = samples[0]
    samples[0] = dataclasses.replace(
        first, contexts=[" ".join([c] * 20) for c in first.contexts or []]
    )
    tools = Tools(judge=judge, embedder=HashEmbedder())
    # answer relevancy's questions: a generated reply, with the rubric's feedback
    return evaluate(samples, METRICS, tools, options={"answer_relevancy": {"n_questions": 1}}).usage


def test_the_counter_counts_what_the_judge_evaluates() -> None:
    config = load_models_config().judge("smollm2-135m")
    settings = dataclasses.replace(config.settings, n_ctx=1200, batch_size=32, threads=1)
    real = DecodesCounted(config.name, settings)
    counter = CountingLlamaJudge(config.name, settings)
    # counted first: the run keeps context states on disk, which a count after it would find
    counted, evaluated = run(counter), run(real)
    assert counted.judge_calls == evaluated.judge_calls > 0
    assert counted.prompt_tokens == evaluated.prompt_tokens
    # each generated token is one llama.cpp call of its own, counted apart
    assert counter.steps == real.decodes - evaluated.generated_tokens
    assert counted.generated_tokens > 0 and evaluated.generated_tokens > 0
    assert counter.identity == real.identity


def test_the_measurement_times_a_real_judge_in_a_few_calls() -> None:
    """The speed a first estimate measures, on SmolLM2: one call to load, the 128-token
    batch, 4 small calls, then the reply's tokens one call each, straight after them (no
    prompt of its own); every figure a finite number, the rates positive."""
    config = load_models_config().judge("smollm2-135m")
    started = time.perf_counter()
    judge = DecodesCounted(config.name, config.settings)
    try:
        speed = measure_speed(judge, started)
    finally:
        judge.close()
    # the reply: at most the 24 characters of its sentence and the JSON around them
    assert 1 + 1 + SMALL_CALLS < judge.decodes <= 1 + 1 + SMALL_CALLS + 40
    rates = (speed.prompt_tokens_per_s, speed.generated_tokens_per_s, speed.load_seconds)
    assert all(math.isfinite(x) and x > 0 for x in rates)
    assert math.isfinite(speed.step_seconds) and speed.step_seconds >= 0
