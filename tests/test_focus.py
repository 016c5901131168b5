"""Focused evidence: statements about long contexts are judged against the context
sentences nearest to them (localeval.metrics.focus); short contexts are shown whole."""

from __future__ import annotations

from fakes import FakeEmbedder, ScriptedJudge

from localeval.data.samples import Sample
from localeval.metrics import Tools
from localeval.metrics.context_recall import ContextRecall
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.focus import FOCUS_ABOVE_CHARS, FOCUS_SENTENCES, focus

# filler sentences that share no word with the statements below
FILLER = [f"Filler number f{n} mentions nothing relevant at all." for n in range(400)]
TOWER = "The tower was finished in 1889 by Eiffel's company."
ANSWER = "The tower was finished in 1889."


def long_sample(answer: str = ANSWER) -> Sample:
    # the one relevant sentence sits deep inside a context far above the focus limit
    contexts = [" ".join(FILLER[:200]), TOWER + " " + " ".join(FILLER[200:])]
    assert sum(map(len, contexts)) > FOCUS_ABOVE_CHARS
    return Sample(
        sample_id="long",
        question="When was the tower finished?",
        contexts=contexts,
        answer=answer,
        reference_answer=answer,
    )


def test_each_statement_sees_its_nearest_sentences_in_context_order() -> None:
    sentences = ["Cats purr.", "The tower is tall.", "Dogs bark.", "The tower was built."]
    found = focus(FakeEmbedder(), [" ".join(sentences)], ["The tower was built in 1889."])
    assert found.sentences == sentences
    # all four fit in the focus, kept in the order the contexts have them
    assert found.kept == [[0, 1, 2, 3]]
    many = [f"Line {n} says nothing." for n in range(20)] + ["The tower was built."]
    found = focus(FakeEmbedder(), many, ["The tower was built in 1889."])
    assert len(found.kept[0]) == FOCUS_SENTENCES
    assert found.evidence(0)[-1] == "The tower was built."


def test_a_long_context_is_narrowed_for_faithfulness_and_recorded() -> None:
    judge = ScriptedJudge([0.9])
    result = Faithfulness().score(long_sample(), Tools(judge=judge, embedder=FakeEmbedder()))
    judge.assert_done()
    (prompt,) = judge.prompts
    # the relevant sentence is shown; the prompt holds only the focus, not 400 fillers
    assert TOWER in prompt.user
    assert prompt.user.count("Filler number") == FOCUS_SENTENCES - 1
    info = result.details["long_context"]
    assert info["context_sentences"] == 401
    assert info["kept_sentences"] == [sorted(info["kept_sentences"][0])]
    assert result.score == 0.9


def test_context_recall_is_narrowed_too() -> None:
    judge = ScriptedJudge([0.8])
    result = ContextRecall().score(long_sample(), Tools(judge=judge, embedder=FakeEmbedder()))
    judge.assert_done()
    assert "Filler number f399" not in judge.prompts[0].user
    assert "kept_sentences" in result.details["long_context"]


def test_a_short_context_is_shown_whole() -> None:
    judge = ScriptedJudge([0.9])
    sample = Sample(
        sample_id="short",
        question="When was the tower finished?",
        contexts=[TOWER, FILLER[0]],
        answer=ANSWER,
    )
    result = Faithfulness().score(sample, Tools(judge=judge, embedder=FakeEmbedder()))
    assert FILLER[0] in judge.prompts[0].user
    assert "long_context" not in result.details


def test_without_an_embedder_a_long_context_is_shown_whole() -> None:
    judge = ScriptedJudge([0.9])
    result = Faithfulness().score(long_sample(), Tools(judge=judge))
    assert "Filler number f399" in judge.prompts[0].user
    assert "long_context" not in result.details


def test_focus_is_not_used_when_it_would_read_more_than_the_contexts() -> None:
    # many statements, each shown 8 sentences, would read the context several times over
    statements = [f"The tower was finished in {1880 + n}." for n in range(20)]
    judge = ScriptedJudge([0.5] * len(statements))
    sample = Sample(
        sample_id="many",
        question="When was the tower finished?",
        contexts=[" ".join(FILLER[:130])],
        answer=" ".join(statements),
    )
    assert sum(map(len, sample.contexts or [])) > FOCUS_ABOVE_CHARS
    result = Faithfulness().score(sample, Tools(judge=judge, embedder=FakeEmbedder()))
    judge.assert_done()
    assert "long_context" not in result.details
    assert all("Filler number f129" in p.user for p in judge.prompts)
