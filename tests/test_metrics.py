"""Each metric's arithmetic and edge cases, with a scripted judge and a fake embedder."""

from __future__ import annotations

import pytest
from fakes import FakeEmbedder, OutOfAnswers, ScriptedJudge

from localeval.data.samples import Sample
from localeval.metrics import Tools
from localeval.metrics.answer_relevancy import AnswerRelevancy
from localeval.metrics.context_precision import ContextPrecision, average_precision
from localeval.metrics.context_recall import ContextRecall
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.parts.statements import statements_score, verdict_share

CONTEXTS = ["Paris is the capital of France.", "The Eiffel Tower was finished in 1889."]


def sample(**fields: object) -> Sample:
    base: dict[str, object] = {
        "sample_id": "s1",
        "question": "When was the Eiffel Tower finished?",
        "contexts": list(CONTEXTS),
        "answer": "The Eiffel Tower was finished in 1889. It is in Paris.",
        "reference_answer": "It was finished in 1889.",
    }
    base.update(fields)
    return Sample(**base)  # type: ignore[arg-type]


# -- faithfulness ------------------------------------------------------------------------


def test_faithfulness_is_mean_support_over_statements() -> None:
    judge = ScriptedJudge([0.9, 0.3])
    result = Faithfulness().score(sample(), Tools(judge=judge))
    judge.assert_done()
    assert result.score == pytest.approx(0.6)
    assert result.details["statements"] == [
        "The Eiffel Tower was finished in 1889.",
        "It is in Paris.",
    ]
    assert result.details["verdicts"] == ["supported", "unsupported"]
    assert result.details["support"] == [0.9, 0.3]


def test_faithfulness_asks_about_each_statement_after_the_shared_passages() -> None:
    judge = ScriptedJudge([1.0, 1.0])
    Faithfulness().score(sample(), Tools(judge=judge))
    first, second = (p.user for p in judge.prompts)
    assert first.endswith('say that "The Eiffel Tower was finished in 1889."? Answer Yes or No.')
    assert second.endswith('say that "It is in Paris."? Answer Yes or No.')
    shared = first[: first.index("Does the context")]
    assert second.startswith(shared)  # the contexts form a common prefix
    assert CONTEXTS[0] in shared and CONTEXTS[1] in shared


def test_verdicts_flip_at_the_judges_own_threshold() -> None:
    """A small judge's P(Yes) is compressed: a supported statement may get 0.45. With the
    judge's thresholds (models.toml) the verdict labels use its scale, not 0.5."""
    plain = Faithfulness().score(sample(), Tools(judge=ScriptedJudge([0.45, 0.35])))
    assert plain.details["verdicts"] == ["unsupported", "unsupported"]
    assert "verdict_threshold" not in plain.details
    tools = Tools(judge=ScriptedJudge([0.45, 0.35]), verdict_thresholds={"faithfulness": 0.4})
    scaled = Faithfulness().score(sample(), tools)
    assert scaled.details["verdicts"] == ["supported", "unsupported"]
    assert scaled.details["verdict_threshold"] == 0.4
    assert scaled.score == plain.score  # labels only: the score is the mean probability
    tools = Tools(judge=ScriptedJudge([0.45]), verdict_thresholds={"context_recall": 0.4})
    recall = ContextRecall().score(sample(reference_answer="It was finished in 1889."), tools)
    assert recall.details["verdicts"] == ["attributed"]


def test_the_share_of_passing_verdicts_is_kept_beside_the_mean() -> None:
    """The score is the mean probability (it gated better on the labelled sets); Ragas'
    reading, the share of statements whose verdict passes, stays in the details."""
    result = Faithfulness().score(sample(), Tools(judge=ScriptedJudge([0.9, 0.3])))
    assert result.score == pytest.approx(0.6) == statements_score([0.9, 0.3])
    assert result.details["verdict_share"] == 0.5 == verdict_share([0.9, 0.3])
    # counted where the verdict labels flip: at the judge's own threshold when it has one
    tools = Tools(judge=ScriptedJudge([0.45, 0.35]), verdict_thresholds={"faithfulness": 0.34})
    assert Faithfulness().score(sample(), tools).details["verdict_share"] == 1.0
    empty = Faithfulness().score(sample(contexts=[]), Tools(judge=ScriptedJudge([])))
    assert empty.details["verdict_share"] == 0.0


def test_a_number_alone_is_a_statement() -> None:
    judge = ScriptedJudge([0.8])
    result = Faithfulness().score(sample(answer="1889"), Tools(judge=judge))
    assert result.score == pytest.approx(0.8)
    assert judge.prompts[0].user.endswith('say that "1889"? Answer Yes or No.')


def test_faithfulness_undefined_without_contexts_or_answer() -> None:
    judge = ScriptedJudge([])
    assert Faithfulness().score(sample(contexts=None), Tools(judge=judge)).reason == "no contexts"
    assert Faithfulness().score(sample(answer=None), Tools(judge=judge)).reason == "no answer"
    assert Faithfulness().score(sample(answer="  "), Tools(judge=judge)).reason == "no answer"


def test_faithfulness_undefined_when_answer_has_no_statements() -> None:
    result = Faithfulness().score(sample(answer="..."), Tools(judge=ScriptedJudge([])))
    assert result.score is None
    assert result.reason == "the answer has no statements"


def test_faithfulness_zero_with_empty_contexts_without_asking() -> None:
    result = Faithfulness().score(sample(contexts=[]), Tools(judge=ScriptedJudge([])))
    assert result.score == 0.0
    assert "no contexts were retrieved" in result.details["note"]


def test_faithfulness_too_many_questions_fails_loudly() -> None:
    with pytest.raises(OutOfAnswers):
        Faithfulness().score(sample(), Tools(judge=ScriptedJudge([0.5])))


# -- context recall ----------------------------------------------------------------------


def test_context_recall_mean_attribution() -> None:
    judge = ScriptedJudge([0.8, 0.0])
    s = sample(reference_answer="It was finished in 1889. It was painted red.")
    result = ContextRecall().score(s, Tools(judge=judge))
    judge.assert_done()
    assert result.score == pytest.approx(0.4)
    assert result.details["verdicts"] == ["attributed", "not attributed"]


def test_context_recall_undefined_without_reference() -> None:
    result = ContextRecall().score(sample(reference_answer=None), Tools(judge=ScriptedJudge()))
    assert result.score is None and result.reason == "no reference_answer"


def test_context_recall_zero_with_empty_contexts() -> None:
    result = ContextRecall().score(sample(contexts=[]), Tools(judge=ScriptedJudge()))
    assert result.score == 0.0


# -- context precision -------------------------------------------------------------------


def test_average_precision_matches_definition() -> None:
    # useful chunks at ranks 1 and 3: (1/1*1 + 2/3*1) / 2
    assert average_precision([1, 0, 1]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([0, 1]) == pytest.approx(0.5)
    assert average_precision([1, 1]) == pytest.approx(1.0)
    assert average_precision([0, 0, 0]) == 0.0


def test_context_precision_ranks_chunks_by_closeness_to_the_reference() -> None:
    embedder = FakeEmbedder()
    s = sample(
        contexts=["Bananas are yellow.", "It was finished in 1889."],
        reference_answer="It was finished in 1889.",
    )
    result = ContextPrecision().score(s, Tools(embedder=embedder))
    assert result.details["usefulness"] == [0.0, 1.0]  # no shared word; identical text
    assert result.details["verdicts"] == ["not useful", "useful"]
    assert result.details["judged_against"] == "reference_answer"
    assert result.score == pytest.approx(0.5)
    # one batch per sample: the target's and every chunk's sentences
    assert embedder.calls == [
        ["It was finished in 1889.", "Bananas are yellow.", "It was finished in 1889."]
    ]


def test_context_precision_useful_chunk_first_scores_one() -> None:
    s = sample(
        contexts=["It was finished in 1889.", "Bananas are yellow."],
        reference_answer="It was finished in 1889.",
    )
    result = ContextPrecision().score(s, Tools(embedder=FakeEmbedder()))
    assert result.score == pytest.approx(1.0)


def test_context_precision_all_chunks_irrelevant_is_zero() -> None:
    s = sample(contexts=["Bananas are yellow.", "Cats sleep."], reference_answer="In 1889.")
    assert ContextPrecision().score(s, Tools(embedder=FakeEmbedder())).score == 0.0


def test_context_precision_averages_a_long_chunk_over_its_sentences() -> None:
    embedder = FakeEmbedder()
    s = sample(
        contexts=["It was finished in 1889. Bananas are yellow."],
        reference_answer="It was finished in 1889.",
    )
    result = ContextPrecision().score(s, Tools(embedder=embedder))
    assert embedder.calls[0][1:] == ["It was finished in 1889.", "Bananas are yellow."]
    assert 0.5 < result.details["usefulness"][0] < 1.0  # diluted by the unrelated sentence


def test_context_precision_falls_back_to_answer() -> None:
    s = sample(reference_answer=None, answer="Paris is the capital of France.")
    result = ContextPrecision().score(s, Tools(embedder=FakeEmbedder()))
    assert result.details["judged_against"] == "answer"
    assert result.details["usefulness"][0] == pytest.approx(1.0)


def test_context_precision_undefined_cases() -> None:
    tools = Tools(embedder=FakeEmbedder())
    assert ContextPrecision().score(sample(contexts=[]), tools).reason == "no contexts"
    assert ContextPrecision().score(sample(contexts=None), tools).reason == "no contexts"
    no_target = sample(reference_answer=None, answer=None)
    reason = ContextPrecision().score(no_target, tools).reason or ""
    assert "no reference_answer or answer" in reason


def test_context_precision_empty_chunk_is_not_useful() -> None:
    embedder = FakeEmbedder()
    s = sample(
        contexts=["  ", "It was finished in 1889."], reference_answer="It was finished in 1889."
    )
    result = ContextPrecision().score(s, Tools(embedder=embedder))
    assert result.details["usefulness"] == [0.0, 1.0]
    assert "  " not in embedder.calls[0]


# -- answer relevancy --------------------------------------------------------------------


def test_answer_relevancy_is_the_probability_that_the_answer_answers() -> None:
    question = "When was the Eiffel Tower finished?"
    judge = ScriptedJudge([0.1, 0.8, {"questions": [question, question, "Where is Paris?"]}])
    embedder = FakeEmbedder()
    result = AnswerRelevancy(n_questions=3).score(sample(), Tools(judge=judge, embedder=embedder))
    judge.assert_done()
    assert result.score == pytest.approx(0.8)
    assert judge.prompts[1].user.endswith(
        f'Does the answer above answer the question "{question}"? Answer Yes or No.'
    )
    # the generated questions and their similarity are kept as evidence
    sims = result.details["similarities"]
    assert sims[0] == pytest.approx(1.0) and sims[1] == pytest.approx(1.0)
    assert sims[2] < 0.5
    assert result.details["question_similarity"] == pytest.approx(sum(sims) / 3, abs=1e-3)
    assert result.details["answers_probability"] == 0.8
    assert result.details["language"] == "en"


def test_answer_relevancy_prompts_share_the_answer_as_prefix() -> None:
    judge = ScriptedJudge([0.1, 0.8, {"questions": ["a?", "b?", "c?"]}])
    AnswerRelevancy(n_questions=3).score(sample(), Tools(judge=judge, embedder=FakeEmbedder()))
    first, second, third = (p.segments[0] for p in judge.prompts)
    assert (
        first
        == second
        == third
        == "Answer:\nThe Eiffel Tower was finished in 1889. It is in Paris."
    )


def test_answer_relevancy_by_default_asks_two_verdicts_and_needs_no_embedder() -> None:
    judge = ScriptedJudge([0.1, 0.8])
    metric = AnswerRelevancy()
    assert not metric.uses_embedder
    result = metric.score(sample(), Tools(judge=judge))
    judge.assert_done()
    assert result.score == pytest.approx(0.8)
    assert "generated_questions" not in result.details


def test_answer_relevancy_noncommittal_answer_scores_zero() -> None:
    judge = ScriptedJudge([0.93, 0.7])
    result = AnswerRelevancy().score(sample(answer="I don't know."), Tools(judge=judge))
    assert result.score == 0.0
    assert result.details["noncommittal_probability"] == 0.93


def test_answer_relevancy_chinese_question_gets_chinese_prompt() -> None:
    judge = ScriptedJudge([0.0, 0.9, {"questions": ["埃菲尔铁塔何时建成？"] * 3}])
    s = sample(question="埃菲尔铁塔何时建成？", answer="埃菲尔铁塔于1889年建成。")
    result = AnswerRelevancy(n_questions=3).score(s, Tools(judge=judge, embedder=FakeEmbedder()))
    assert result.details["language"] == "zh"
    assert "中文" in judge.prompts[2].user
    assert result.score == pytest.approx(0.9)
    assert result.details["question_similarity"] == pytest.approx(1.0)


def test_answer_relevancy_undefined_without_answer() -> None:
    result = AnswerRelevancy().score(sample(answer=None), Tools(judge=ScriptedJudge()))
    assert result.score is None and result.reason == "no answer"


def test_the_default_sets_old_name_answers_with_a_deprecation_warning() -> None:
    import localeval.metrics as metrics

    with pytest.warns(DeprecationWarning, match="use DEFAULT_METRICS"):
        old = metrics.RAG_METRICS
    assert old is metrics.DEFAULT_METRICS
    assert list(old) == ["context_precision", "faithfulness", "context_recall", "answer_relevancy"]
    with pytest.raises(AttributeError):
        _ = metrics.NO_SUCH_NAME
