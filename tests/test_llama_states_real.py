"""Context states kept on disk, with a real model (SmolLM2-135M): a second judge, as a
later process would, restores a sample's contexts instead of evaluating them, and every
number it gives is the same, bit for bit, as a judge's that keeps no state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from localeval.backends.llama_count import CountingLlamaJudge
from localeval.backends.llama_judge import LlamaJudge
from localeval.backends.llama_settings import LlamaCppSettings
from localeval.backends.llama_states import MIN_KEPT_TOKENS
from localeval.config import load_models_config
from localeval.data.samples import Sample
from localeval.judge import Prompt
from localeval.metrics import Tools, build_metric
from localeval.metrics.parts.statements import asked_of_answer
from localeval.prompts import rag, rubric
from localeval.prompts.chat import Segment
from localeval.prompts.rubric import SCORE_OPTIONS
from localeval.prompts.sets import RAG_6, RAG_7
from localeval.schema import Array, Object, Str

pytestmark = pytest.mark.real_models

NAME = "smollm2-135m"
CONTEXTS = [
    "The Eiffel Tower was finished in 1889 for the World's Fair in Paris. " * 12,
    "It is 330 metres tall and was the tallest structure in the world until 1930. " * 12,
]
STATEMENTS = ["The tower was finished in 1889.", "The tower is 500 metres tall."]
REPLY = Object((("facts", Array(Str(12), 1, 1)),))


def settings(**changes: object) -> LlamaCppSettings:
    base = load_models_config().judge(NAME).settings
    assert isinstance(base, LlamaCppSettings)
    return replace(base, **changes)  # type: ignore[arg-type]


def prompts() -> list[Prompt]:
    return [rag.context_says(CONTEXTS, s) for s in STATEMENTS]


#: the same contexts under another question: it shares only their part of the others' prefix
OTHER_QUESTION = rag.answer_supported(CONTEXTS, "How tall is it?", "330 metres.", "")


def numbers(judge: LlamaJudge) -> tuple[list[float], list[float], object]:
    verdicts = [judge.yes_probability(p) for p in prompts()]
    verdicts.append(judge.yes_probability(OTHER_QUESTION))
    choices = judge.choice_probabilities(prompts()[0], ["1", "2", "10"])
    reply = judge.generate(
        Prompt.of(rag.SYSTEM_JUDGE, *rag.context_segments(CONTEXTS), "\n\nList facts. JSON."),
        REPLY,
    )
    return verdicts, choices, reply


def test_a_restored_context_gives_the_same_numbers_bit_for_bit() -> None:
    plain = LlamaJudge(NAME, settings(state_cache_gb=0))
    assert plain.states is None
    expected = numbers(plain)
    assert plain.count_tokens(prompts()[0]) > MIN_KEPT_TOKENS + 50

    first = LlamaJudge(NAME, settings())  # computes the contexts and keeps them
    assert numbers(first) == expected
    assert first.restored == 0 and first.states is not None
    # one file: the other prompts add too little to what the judge holds in memory
    assert first.states.stats().entries == 1

    second = LlamaJudge(NAME, settings())  # a later process: restores them
    assert numbers(second) == expected
    assert second.restored == 1 and second.restored_tokens > MIN_KEPT_TOKENS
    saved = first.usage.prompt_tokens - second.usage.prompt_tokens
    assert saved == second.restored_tokens

    # a third process asks first what shares only the contexts with what was kept
    new_question = rag.answer_supported(CONTEXTS, "When was it built?", "In 1889.", "")
    third = LlamaJudge(NAME, settings())
    assert third.yes_probability(new_question) == plain.yes_probability(new_question)
    assert third.restored == 1 and third.restored_tokens < second.restored_tokens
    assert first.states.stats().entries == 1  # the question alone was not worth a file
    for judge in (plain, first, second, third):
        judge.close()


def test_a_judge_with_other_numbers_never_reads_another_s_state() -> None:
    first = LlamaJudge(NAME, settings())
    verdict = first.yes_probability(prompts()[0])
    other = LlamaJudge(NAME, settings(batch_size=64))  # batched otherwise: other numbers
    other.yes_probability(prompts()[0])
    assert other.restored == 0
    again = LlamaJudge(NAME, settings())
    assert again.yes_probability(prompts()[0]) == verdict and again.restored == 1
    for judge in (first, other, again):
        judge.close()


def test_the_estimate_counts_a_kept_context_as_not_evaluated() -> None:
    cold = CountingLlamaJudge(NAME, settings())
    for prompt in prompts():
        cold.yes_probability(prompt)
    real = LlamaJudge(NAME, settings())
    for prompt in prompts():
        real.yes_probability(prompt)
    assert cold.usage.prompt_tokens == real.usage.prompt_tokens  # nothing was kept before
    warm = CountingLlamaJudge(NAME, settings())
    for prompt in prompts():
        warm.yes_probability(prompt)
    restored = LlamaJudge(NAME, settings())
    for prompt in prompts():
        restored.yes_probability(prompt)
    assert warm.restored == restored.restored == 1
    assert warm.usage.prompt_tokens == restored.usage.prompt_tokens
    assert warm.usage.prompt_tokens < cold.usage.prompt_tokens - MIN_KEPT_TOKENS
    for judge in (cold, real, warm, restored):
        judge.close()


def test_a_count_of_runs_in_turn_counts_a_later_run_as_a_new_process_would() -> None:
    # scripts/count_loop.py: one counter for v1 then v2, its memory emptied between them
    counter = CountingLlamaJudge(NAME, settings())
    for prompt in prompts():
        counter.yes_probability(prompt)
    cold = counter.usage.prompt_tokens
    counter.forget()
    for prompt in prompts():
        counter.yes_probability(prompt)
    first = LlamaJudge(NAME, settings())  # the first process: keeps the contexts
    for prompt in prompts():
        first.yes_probability(prompt)
    later = LlamaJudge(NAME, settings())  # a later process: restores them
    for prompt in prompts():
        later.yes_probability(prompt)
    assert counter.restored == later.restored == 1
    assert counter.usage.prompt_tokens - cold == later.usage.prompt_tokens
    assert first.usage.prompt_tokens == cold
    for judge in (counter, first, later):
        judge.close()


def test_rag_7_reads_the_answer_once_for_answer_relevancy() -> None:
    answer = "The tower was finished in 1889 for the World's Fair, and it is 330 metres tall."
    sample = Sample("s", "When was the tower finished?", CONTEXTS, answer)
    metric = build_metric("answer_relevancy", {"n_questions": 0})
    spent = {}
    for words in (RAG_6, RAG_7):
        judge = CountingLlamaJudge(NAME, settings(state_cache_gb=0))
        metric.score(sample, Tools(judge=judge, prompts=words))
        spent[words.version] = (judge.usage.judge_calls, judge.usage.prompt_tokens)
        answer_tokens = judge.count_tokens(Prompt.of("", rag.answer_segment(answer, "en")))
        empty = judge.count_tokens(Prompt.of("", ""))
        judge.close()
    assert spent["rag-6"][0] == spent["rag-7"][0] == 2
    # the same two questions, the answer's segment evaluated once instead of twice
    assert spent["rag-6"][1] - spent["rag-7"][1] == answer_tokens - empty > 20


def test_a_quantized_cache_restores_the_same_numbers_and_never_reads_an_f16_state() -> None:
    q8 = {"type_k": "q8_0", "type_v": "q8_0", "flash_attn": True}
    plain = LlamaJudge(NAME, settings(state_cache_gb=0, **q8))
    expected = numbers(plain)
    first = LlamaJudge(NAME, settings(**q8))  # computes the contexts and keeps them
    assert numbers(first) == expected and first.restored == 0
    second = LlamaJudge(NAME, settings(**q8))  # a later process: restores them
    assert numbers(second) == expected and second.restored == 1
    f16 = LlamaJudge(NAME, settings())  # the same prompts, the default cache: its own state
    f16.yes_probability(prompts()[0])
    assert f16.restored == 0
    again = LlamaJudge(NAME, settings(**q8))  # the f16 state did not replace the q8_0 one
    assert again.yes_probability(prompts()[0]) == expected[0][0] and again.restored == 1
    for judge in (plain, first, second, f16, again):
        judge.close()


class RecordingJudge(LlamaJudge):
    """The judge, noting the length in tokens of each state it keeps on disk."""

    def __init__(self, name: str, settings: LlamaCppSettings):
        super().__init__(name, settings)
        self.kept: list[int] = []

    def _save(self, key: str, prefix: Sequence[Segment], shorter: Sequence[str]) -> None:
        self.kept.append(sum(len(segment) for segment in prefix))
        super()._save(key, prefix, shorter)


#: an answer long enough that its own prefix passes the floor of a state worth a file
LONG_ANSWER = "The tower was finished in 1889 for the World's Fair and is 330 metres tall. " * 20


def answer_prompts() -> list[Prompt]:
    """Prompts whose shared part holds the answer: answer relevancy's, rag-7's, and answer
    correctness' statements of the reference asked against the answer."""
    question = "When was the tower finished?"
    return [
        rag.answer_noncommittal(question, LONG_ANSWER, "en"),
        rag.question_then_answer(question, LONG_ANSWER, "en", ""),
        rag.question_answer_noncommittal(question, LONG_ANSWER, "en"),
        asked_of_answer(rag.text_says)([LONG_ANSWER], question, "It was finished in 1889."),
    ]


def test_a_state_that_holds_the_answer_is_never_kept_on_disk() -> None:
    # the next version of the answers never reads it, so it would only take disk
    judge = RecordingJudge(NAME, settings())
    assert judge.count_tokens(answer_prompts()[0]) > MIN_KEPT_TOKENS + 50
    for prompt in answer_prompts():
        judge.yes_probability(prompt)
    assert judge.kept == [] and judge.states is not None and judge.states.stats().entries == 0
    # the floor alone would have kept them: the answer's length passes it
    judge.close()
    unmarked = RecordingJudge(NAME, settings())
    for prompt in answer_prompts():
        unmarked.yes_probability(replace(prompt, lasting=None))
    assert len(unmarked.kept) >= 2
    unmarked.close()


def test_the_rubric_keeps_the_contexts_state_and_not_the_answer_s() -> None:
    plain = LlamaJudge(NAME, settings(state_cache_gb=0))
    first_version = rubric.overall_score("When?", LONG_ANSWER, CONTEXTS, None)
    next_version = rubric.overall_score("When?", "In 1889.", CONTEXTS, None)
    expected = [plain.choice_probabilities(p, SCORE_OPTIONS) for p in (first_version, next_version)]
    first = RecordingJudge(NAME, settings())
    assert first.choice_probabilities(first_version, SCORE_OPTIONS) == expected[0]
    assert len(first.kept) == 1
    later = LlamaJudge(NAME, settings())  # the next version's process: restores the contexts
    assert later.choice_probabilities(next_version, SCORE_OPTIONS) == expected[1]
    # all that was kept is read again: it held nothing of the first version's answer
    assert later.restored == 1 and later.restored_tokens == first.kept[0] > MIN_KEPT_TOKENS
    for judge in (plain, first, later):
        judge.close()
