"""Contexts longer than the judge's window: windows of chunks, pieces of huge chunks, the
beginning of a huge answer, and undefined when not even the statement fits.

The scripted judge counts words as tokens (ScriptedJudge.fits), so a small n_ctx makes the
window rule kick in with short texts. Every prompt it is asked must fit.
"""

from __future__ import annotations

import pytest
from fakes import FakeEmbedder, ScriptedJudge

from localeval.data.samples import Sample
from localeval.judge import Prompt
from localeval.metrics import Tools
from localeval.metrics.answer_relevancy import AnswerRelevancy
from localeval.metrics.context_recall import ContextRecall
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.parts.long_context import natural_cut
from localeval.prompts import rag


def chunk(n: int, words: int = 10) -> str:
    return " ".join(f"c{n}w{i}" for i in range(words)) + "."


CHUNKS = [chunk(n) for n in range(1, 7)]  # six chunks of ten words
STATEMENT = "The tower was finished in 1889."


def sample(**fields: object) -> Sample:
    base: dict[str, object] = {
        "sample_id": "long",
        "question": "When was the tower finished?",
        "contexts": list(CHUNKS),
        "answer": STATEMENT,
        "reference_answer": STATEMENT,
    }
    base.update(fields)
    return Sample(**base)  # type: ignore[arg-type]


def words(prompt: Prompt) -> int:
    return len(prompt.user.split())


def n_ctx_for(prompt: Prompt, reserve: int = 1) -> int:
    return words(prompt) + reserve


def assert_all_fit(judge: ScriptedJudge, reserve: int = 1) -> None:
    assert judge.prompts, "the judge was never asked"
    for prompt in judge.prompts:
        assert judge.fits(prompt, reserve), prompt.user


def shown_chunks(prompt: Prompt) -> list[int]:
    return [n for n in range(1, 7) if f"c{n}w0" in prompt.user]


def test_faithfulness_judges_each_window_and_keeps_the_best_support() -> None:
    # room for two chunks and the question: three windows
    n_ctx = n_ctx_for(rag.context_says(CHUNKS[:2], STATEMENT))
    judge = ScriptedJudge([0.1, 0.8, 0.3], n_ctx=n_ctx)
    result = Faithfulness().score(sample(), Tools(judge=judge))
    judge.assert_done()
    assert_all_fit(judge)
    assert [shown_chunks(p) for p in judge.prompts] == [[1, 2], [3, 4], [5, 6]]
    assert result.score == pytest.approx(0.8)
    assert result.details["support"] == [0.8]
    assert result.details["verdicts"] == ["supported"]
    long_context = result.details["long_context"]
    assert long_context["windows"] == [[1, 2], [3, 4], [5, 6]]
    assert long_context["best_window"] == [2]
    assert long_context["chunks"] == 6 and long_context["chunks_cut_into_pieces"] == []
    assert "best support kept" in long_context["rule"]


def test_windows_are_asked_window_by_window_so_the_chunks_are_a_shared_prefix() -> None:
    answer = "The tower was finished in 1889. It is in Paris."
    # room for three chunks with the longer statement
    n_ctx = n_ctx_for(rag.context_says(CHUNKS[:3], "The tower was finished in 1889."))
    judge = ScriptedJudge([0.2, 0.3, 0.9, 0.1], n_ctx=n_ctx)
    result = Faithfulness().score(sample(answer=answer), Tools(judge=judge))
    judge.assert_done()
    assert [shown_chunks(p) for p in judge.prompts] == [[1, 2, 3]] * 2 + [[4, 5, 6]] * 2
    assert result.details["support"] == [0.9, 0.3]
    assert result.details["long_context"]["best_window"] == [2, 1]


def test_contexts_that_fit_are_not_windowed() -> None:
    judge = ScriptedJudge([0.7], n_ctx=n_ctx_for(rag.context_says(CHUNKS, STATEMENT)))
    result = Faithfulness().score(sample(), Tools(judge=judge))
    assert shown_chunks(judge.prompts[0]) == [1, 2, 3, 4, 5, 6]
    assert "long_context" not in result.details


def test_a_chunk_too_long_alone_is_cut_into_pieces_that_fit() -> None:
    huge = chunk(1, words=50)
    # room for twenty words of context: 50 words make pieces of 20, 20 and 10, and the
    # last piece shares its window with the next chunk
    n_ctx = n_ctx_for(rag.context_says([chunk(1, words=20)], STATEMENT))
    judge = ScriptedJudge([0.1, 0.95, 0.3], n_ctx=n_ctx)
    result = Faithfulness().score(sample(contexts=[huge, chunk(2)]), Tools(judge=judge))
    judge.assert_done()
    assert_all_fit(judge)
    long_context = result.details["long_context"]
    assert long_context["chunks_cut_into_pieces"] == [1]
    assert long_context["windows"] == [[1, 1], [1, 1], [1, 2]]
    assert long_context["best_window"] == [2]
    # every word of the huge chunk was shown to the judge, once, and cut between words
    shown = " ".join(p.user for p in judge.prompts).split()
    assert all(shown.count(f"c1w{i}") + shown.count(f"c1w{i}.") == 1 for i in range(50))
    assert result.score == pytest.approx(0.95)


def test_statement_too_long_for_any_window_is_undefined() -> None:
    long_statement = "The tower " + "very " * 40 + "tall."
    judge = ScriptedJudge([], n_ctx=30)
    result = Faithfulness().score(sample(answer=long_statement), Tools(judge=judge))
    assert result.score is None
    assert result.reason == (
        "a statement is too long for the judge's context window even without contexts"
    )


def test_context_recall_uses_the_same_rule() -> None:
    n_ctx = n_ctx_for(rag.context_says(CHUNKS[:3], STATEMENT))
    judge = ScriptedJudge([0.4, 0.6], n_ctx=n_ctx)
    result = ContextRecall().score(sample(), Tools(judge=judge))
    judge.assert_done()
    assert result.score == pytest.approx(0.6)
    assert result.details["long_context"]["windows"] == [[1, 3], [4, 6]]


def test_answer_relevancy_judges_the_beginning_of_a_huge_answer() -> None:
    answer = " ".join(f"word{i}" for i in range(400)) + "."
    question = "When was the tower finished?"
    # room for the reply the schema allows (2,425 tokens) and about 100 words
    judge = ScriptedJudge([0.1, 0.9, {"questions": [question] * 3}], n_ctx=2425 + 100)
    result = AnswerRelevancy(n_questions=3).score(
        sample(answer=answer), Tools(judge=judge, embedder=FakeEmbedder())
    )
    judge.assert_done()
    noncommittal, answers, questions = judge.prompts
    assert judge.fits(noncommittal, 1) and judge.fits(answers, 1)
    assert "word0 " in noncommittal.user and "word399" not in noncommittal.user
    long_context = result.details["long_context"]
    assert long_context["answer_chars"] == len(answer)
    assert 0 < long_context["judged_chars"] < len(answer)
    assert answer[: long_context["judged_chars"]] in questions.user
    assert answer[: long_context["judged_chars"]] in answers.user
    assert result.score == pytest.approx(0.9)


def test_answer_relevancy_undefined_when_the_window_cannot_hold_the_reply() -> None:
    judge = ScriptedJudge([], n_ctx=1000)
    metric = AnswerRelevancy(n_questions=3)
    result = metric.score(sample(), Tools(judge=judge, embedder=FakeEmbedder()))
    assert result.reason == (
        "the judge's context window is too small to write the questions (they need up to "
        "2425 tokens; raise n_ctx)"
    )


def test_natural_cut_prefers_sentence_ends_then_spaces() -> None:
    text = "One two three four. Five six seven"
    assert natural_cut(text, 26) == len("One two three four. ")
    assert natural_cut("One. Two three four five six", 20) == len("One. Two three four ")
    assert natural_cut("abcdef ghijkl mnop", 16) == len("abcdef ghijkl ")
    assert natural_cut("没有空格的中文文本很长", 6) == 6
