"""Claims and hard facts with the real default judge on a few samples (slow)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from localeval.config import load_models_config
from localeval.data.samples import Sample
from localeval.metrics import Tools, build_metric
from localeval.metrics.answer_correctness import AnswerCorrectness
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.parts.claims import written_claims
from localeval.prompts.sets import StatementMode
from localeval.text import split_sentences
from localeval.tools import load_tools

pytestmark = pytest.mark.real_models


@pytest.fixture(scope="module")
def tools() -> Tools:
    return load_tools(load_models_config(), [build_metric("answer_correctness")])


TWO_FACTS = {
    "en": "The Team plan costs 12 euros per user per month with monthly billing, or 10 euros "
    "per user per month if you pay yearly.",
    "zh": "团队版按月付费为每位用户每月12欧元，按年付费为每位用户每月10欧元。",
}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_judge_writes_a_two_fact_sentence_as_its_claims(tools: Tools, language: str) -> None:
    text = TWO_FACTS[language]
    assert tools.judge is not None
    statements = written_claims(text, split_sentences(text), tools.judge, tools.prompts.rag)
    assert statements.fallbacks == []
    assert len(statements.texts) >= 2, statements.texts
    # each price in a claim of its own
    assert any("12" in c and "10" not in c for c in statements.texts), statements.texts
    assert any("10" in c and "12" not in c for c in statements.texts), statements.texts


REFUND = {
    "en": (
        "How long is the refund window?",
        ["Refunds are accepted within 30 days of purchase.", "Shipping takes 3-5 business days."],
        "You can get a refund within 14 days of purchase.",
    ),
    "zh": (
        "退款期限是多久？",
        ["购买之日起30天内可申请退款。", "配送需要3到5个工作日。"],
        "购买之日起14天内可以申请退款。",
    ),
}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_number_stated_otherwise_fails_with_hard_facts(tools: Tools, language: str) -> None:
    """The 1.5B already says "no" to these (P 0.11 and 0.31 on 2026-12-03): the hard-fact
    check then leaves its verdict as it is; were it to say "yes", the check turns it to 0
    with the reason (what the scripted judge's test in test_claims.py proves either way)."""
    question, contexts, wrong = REFUND[language]
    hard = replace(
        tools,
        prompts=replace(
            tools.prompts,
            rag=replace(
                tools.prompts.rag,
                statement_modes={"faithfulness": StatementMode(hard_facts=True)},
            ),
        ),
    )
    result = Faithfulness().score(Sample("s", question, contexts, wrong), hard)
    plain = Faithfulness().score(Sample("s", question, contexts, wrong), tools)
    assert result.score is not None and plain.score is not None
    assert result.score < 0.5
    if plain.score >= 0.5:  # the judge alone said yes: the override is what turned it
        assert result.score == 0.0
        assert result.details["hard_facts"][0]["reason"].startswith(
            "says 14" if language == "en" else "says 14天"
        )
    else:  # the judge's own "no" stands, untouched
        assert result.score == plain.score and "hard_facts" not in result.details


def test_rag_6_claims_scores_a_chinese_answer_against_the_references_claims() -> None:
    """The opt-in set as a user picks it (models.toml `prompts = "rag-6-claims"`): the
    Chinese reference's two prices written as claims, the wrong price below the right."""
    config = load_models_config()
    name = config.default_judge
    judges = {**config.judges, name: replace(config.judges[name], prompts="rag-6-claims")}
    chosen = load_tools(replace(config, judges=judges), [build_metric("answer_correctness")])
    reference = TWO_FACTS["zh"]
    right = "按月付费每位用户每月12欧元，按年付费每月10欧元。"
    wrong = "按月付费每位用户每月15欧元，按年付费每月10欧元。"
    scores = {}
    for answer in (right, wrong):
        result = AnswerCorrectness().score(
            Sample("s", "团队版多少钱？", None, answer, reference), chosen
        )
        assert result.details["statement_modes"]["reference"] == "claims+hard-facts"
        assert len(result.details["reference_statements"]) >= 2
        scores[answer] = result.score
    assert scores[right] > scores[wrong]
