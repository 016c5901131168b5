"""Claims, focused evidence and hard facts (localeval.metrics.parts.claims, .evidence,
.hard_facts) and how the statement metrics use them, with a scripted judge."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fakes import FakeEmbedder, ScriptedJudge

from localeval.data.samples import Sample
from localeval.errors import UsageError
from localeval.metrics import Tools, build_metric, configure_metrics
from localeval.metrics.answer_correctness import AnswerCorrectness
from localeval.metrics.faithfulness import Faithfulness
from localeval.metrics.parts.claims import (
    CLAIMS_SCHEMA,
    checked_claims,
    statement_weights,
    written_claims,
)
from localeval.metrics.parts.evidence import FOCUS_SENTENCES, closest, is_long
from localeval.metrics.parts.hard_facts import chinese_number, conflicts, english_number, quantities
from localeval.prompts.sets import PROMPT_SETS, RAG_6, PromptSet, StatementMode
from localeval.schema import parse

CLAIMS = StatementMode(claims=True)
HARD = StatementMode(hard_facts=True)
LONG_SENTENCE = (
    "The Team plan costs 12 euros per user per month billed monthly, or 10 euros billed yearly."
)


def prompts_with(**modes: StatementMode) -> PromptSet:
    """rag-6 with these statement modes (side names with dots written as __)."""
    chosen = {side.replace("__", "."): mode for side, mode in modes.items()}
    return replace(RAG_6, rag=replace(RAG_6.rag, statement_modes=chosen))


# -- hard facts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("You have 14 days to ask.", [("duration:day", 14.0)]),
        ("退款期限是三十天", [("duration:day", 30.0)]),
        ("售价299元", [("money:cny", 299.0)]),
        ("It costs €12 a month", [("money:eur", 12.0)]),
        ("twenty-one weeks", [("duration:week", 21.0)]),
        ("1.5万人", [("people", 15000.0)]),
        ("增加16.2%", [("percent", 16.2)]),
        ("百分之十六", [("percent", 16.0)]),
        ("founded in 2014", [("year", 2014.0)]),
        ("2019年", [("year", 2019.0)]),
        ("5年", [("duration:year", 5.0)]),
        ("10月3日", [("month-of-year", 10.0), ("day-of-month", 3.0)]),
        ("on October 3", [("month-of-year", 10.0), ("day-of-month", 3.0)]),
        # no kind: a count of things, an ordinal, a word that is no number
        ("over 7,000 books", []),
        ("第一天", []),
        ("One approach is to wait.", []),
    ],
)
def test_quantities_are_numbers_with_their_kind(text: str, found: list[tuple[str, float]]) -> None:
    assert [(q.kind, q.value) for q in quantities(text)] == found


def test_numerals_in_words_are_numbers() -> None:
    assert english_number("three hundred thousand") == 300_000
    assert english_number("twenty-one") == 21
    assert english_number("soon") is None
    assert chinese_number("一百九十九") == 199
    assert chinese_number("两万") == 20_000
    assert chinese_number("一亿两千万") == 120_000_000
    assert chinese_number("二〇二四") == 2024
    assert chinese_number("三千零五") == 3005


def test_a_quantity_the_evidence_gives_otherwise_conflicts() -> None:
    evidence = ["The refund window is 30 days from purchase."]
    assert conflicts("The refund window is 14 days.", evidence) == [
        "says 14 days; the evidence says 30 days"
    ]
    assert conflicts("退款期限为14天", ["购买后三十天内可全额退款"]) == [
        "says 14天; the evidence says 三十天"
    ]
    assert conflicts("现价299元", ["现价199元"]) == ["says 299元; the evidence says 199元"]


@pytest.mark.parametrize(
    ("statement", "evidence"),
    [
        ("You get a refund within 30 days.", "Refunds within thirty days of purchase."),
        ("增加16%", "增加16.2%"),  # rounded to the less precise
        ("It ships in 14 days.", "It ships soon."),  # the evidence gives no duration: the judge
        ("12 euros a month, or 10 euros yearly", "10 euros yearly and 12 euros monthly"),
        # a point between thousands, as many European texts write it
        ("The fine is € 25.000.", "The fine is €25,000."),
        ("The fine is €25,000.", "The fine is € 25.000."),
    ],
)
def test_the_same_quantity_or_none_of_its_kind_does_not_conflict(
    statement: str, evidence: str
) -> None:
    assert conflicts(statement, [evidence]) == []


# -- claims ---------------------------------------------------------------------------------


def test_claims_of_a_sentence_are_checked() -> None:
    sentence = "The Team plan costs 12 euros a month, or 10 euros billed yearly [4]."
    ok = ["The Team plan costs 12 euros a month.", "The Team plan costs 10 euros billed yearly."]
    assert checked_claims(sentence, [*ok, ok[0], " Yes", ""]) == (ok, None)
    cases = {
        "no claim states anything": ["Yes.", "-"],
        "a claim is not in the sentence's language: '团队计划每月12欧元'": ["团队计划每月12欧元"],
        "the claims leave out 10": ["The Team plan costs 12 euros a month."],
        "a claim is mostly not in the sentence: 'Refunds are issued within 30 days of the "
        "first purchase.'": [*ok, "Refunds are issued within 30 days of the first purchase."],
    }
    for reason, claims in cases.items():
        assert checked_claims(sentence, claims) == ([], reason)
    padded = "The Team plan " + "really " * 20 + "costs 12 euros a month and 10 euros yearly."
    longer = checked_claims(sentence, [padded])[1]
    assert longer == f"a claim is longer than the sentence: {padded!r}"


def test_claims_are_written_per_sentence_after_the_whole_text() -> None:
    text = f"It is cheap. {LONG_SENTENCE}"
    written = [LONG_SENTENCE[:60] + ".", "The Team plan costs 10 euros billed yearly."]
    judge = ScriptedJudge([{"claims": written}])
    statements = written_claims(text, ["It is cheap.", LONG_SENTENCE], judge, RAG_6.rag)
    judge.assert_done()
    # the short sentence is one claim already: only the long one cost a call
    assert statements.texts == ["It is cheap.", *written]
    assert statements.sentence_of == [0, 1, 1]
    prompt = judge.prompts[0]
    assert prompt.segments[0] == f"Text:\n{text}"
    assert prompt.user.endswith(f'(names instead of pronouns): "{LONG_SENTENCE}" Reply in JSON.')
    # a claim carries its share of its sentence's words
    assert statements.weights() == [3, 17 / 2, 17 / 2]


def test_claims_that_fail_their_checks_leave_the_sentence_whole_with_a_note() -> None:
    judge = ScriptedJudge([{"claims": ["The Team plan costs 12 euros."]}])
    statements = written_claims(LONG_SENTENCE, [LONG_SENTENCE], judge, RAG_6.rag)
    assert statements.texts == [LONG_SENTENCE]
    assert statements.details() == {
        "claims_fallback": [{"sentence": 0, "reason": "the claims leave out 10"}]
    }


def test_a_text_too_long_for_the_window_keeps_its_sentences() -> None:
    judge = ScriptedJudge([], n_ctx=50)  # the reply's reserve alone does not fit
    statements = written_claims(LONG_SENTENCE, [LONG_SENTENCE], judge, RAG_6.rag)
    assert statements.texts == [LONG_SENTENCE]
    assert statements.fallbacks == [{"sentence": 0, "reason": "too long for the judge's window"}]


def test_the_claims_schema_bounds_the_reply() -> None:
    assert parse(CLAIMS_SCHEMA, '{"claims":["a","b","c","d"]}') == {"claims": ["a", "b", "c", "d"]}
    for bad in ('{"claims":[]}', '{"claims":["a","b","c","d","e"]}'):
        with pytest.raises(Exception, match="does not match its schema"):
            parse(CLAIMS_SCHEMA, bad)


def test_chinese_claims_are_asked_in_chinese() -> None:
    text = "球队新签下了荷兰球星孟菲斯·德佩、葡萄牙中场安德烈·桑切斯等强援。"
    claims = ["球队签下了荷兰球星孟菲斯·德佩", "球队签下了葡萄牙中场安德烈·桑切斯"]
    judge = ScriptedJudge([{"claims": claims}])
    assert written_claims(text, [text], judge, RAG_6.rag).texts == claims
    assert judge.prompts[0].segments[0].startswith("文本：")
    assert "用中文以JSON格式回复" in judge.prompts[0].user


# -- the metrics ---------------------------------------------------------------------------


def correctness_sample(answer: str, reference: str) -> Sample:
    return Sample("s1", "How much is the Team plan?", None, answer, reference)


def test_answer_correctness_asks_the_reference_claims_and_weighs_them_by_sentence() -> None:
    answer = "The Team plan costs 12 euros a month."
    claims = ["The Team plan costs 12 euros per user per month.", "It costs 10 euros yearly."]
    # the answer: one short sentence; the reference: its claims written, then each asked
    judge = ScriptedJudge([0.9, {"claims": claims}, 0.8, 0.2])
    tools = Tools(judge=judge, prompts=prompts_with(answer_correctness__reference=CLAIMS))
    result = AnswerCorrectness().score(correctness_sample(answer, LONG_SENTENCE), tools)
    judge.assert_done()
    details = result.details
    assert details["statements"] == [answer]
    assert details["reference_statements"] == claims
    assert details["reference_sentences"] == [LONG_SENTENCE]
    assert details["reference_claim_sentence"] == [0, 0]
    assert details["recall"] == pytest.approx(0.5)  # both claims share one sentence's weight
    assert details["statement_modes"] == {"answer": "sentences", "reference": "claims"}
    assert statement_weights(claims, {}) == [10, 5]  # outside claims: each its own words


def test_the_command_line_picks_the_statements_over_the_prompt_set() -> None:
    assert configure_metrics(
        ["answer_correctness"], {"answer_correctness_statements": "claims"}
    ) == {"answer_correctness": {"statements": "claims"}}
    with pytest.raises(
        UsageError, match="answer_correctness_statements must be one of sentences, claims, "
    ):
        configure_metrics(["answer_correctness"], {"answer_correctness_statements": "words"})
    with pytest.raises(UsageError, match="faithfulness_statements sets faithfulness; add -m"):
        configure_metrics(["context_recall"], {"faithfulness_statements": "claims"})
    # the set says sentences; the option asks the reference's claims
    metric = build_metric("answer_correctness", {"answer_correctness": {"statements": "claims"}})
    judge = ScriptedJudge([{"claims": ["The Team plan costs 12 euros per user per month."]}])
    judge.answers.extend([0.9, {"claims": ["The Team plan costs 12 euros per user per month."]}])
    judge.answers.append(0.9)
    answer = "The Team plan costs 12 euros per user per month, as the price list says."
    result = metric.score(correctness_sample(answer, answer), Tools(judge=judge))
    judge.assert_done()
    assert result.details["statement_modes"] == {"answer": "claims", "reference": "claims"}


def test_a_setting_is_recorded_only_when_given() -> None:
    from localeval.engine import metric_settings

    assert metric_settings(AnswerCorrectness()) == {"beta": 1.0, "diagnose": False}
    assert metric_settings(Faithfulness()) == {}
    assert metric_settings(Faithfulness(statements="claims")) == {"statements": "claims"}


def test_a_number_the_context_states_otherwise_turns_a_yes_into_a_no() -> None:
    sample = Sample(
        "s1",
        "How long is the refund window?",
        ["Refunds are accepted within 30 days of purchase."],
        "You can ask for a refund within 14 days. Refunds go to the card.",
    )
    judge = ScriptedJudge([0.9, 0.8])
    tools = Tools(judge=judge, prompts=prompts_with(faithfulness=HARD))
    result = Faithfulness().score(sample, tools)
    assert result.details["support"] == [0.0, 0.8]
    assert result.details["verdicts"] == ["unsupported", "supported"]
    assert result.details["hard_facts"] == [
        {"statement": 0, "reason": "says 14 days; the evidence says 30 days"}
    ]
    # without hard facts the judge's "yes" stands
    plain = Faithfulness().score(sample, Tools(judge=ScriptedJudge([0.9, 0.8])))
    assert plain.details["support"] == [0.9, 0.8] and "hard_facts" not in plain.details


def test_long_evidence_is_asked_sentence_by_sentence() -> None:
    filler = [f"Paragraph {n} talks about the weather in town number {n} today." for n in range(14)]
    contexts = [" ".join(filler[:7]), "The refund window is 30 days.", " ".join(filler[7:])]
    assert is_long(contexts) and not is_long(["The refund window is 30 days."])
    sample = Sample("s1", "How long?", contexts, "The refund window is 30 days.")
    judge = ScriptedJudge([0.9])
    tools = Tools(
        judge=judge,
        embedder=FakeEmbedder(),
        prompts=prompts_with(faithfulness=StatementMode(focused=True)),
    )
    result = Faithfulness().score(sample, tools)
    judge.assert_done()
    chosen = result.details["focused_evidence"][0]
    assert len(chosen) == FOCUS_SENTENCES
    assert result.details["evidence_sentences"][7] == "The refund window is 30 days."
    assert 7 in chosen
    prompt = judge.prompts[0].user
    assert "The refund window is 30 days." in prompt and "number 13" not in prompt


def test_closest_sentences_are_found_by_words_without_an_embedder() -> None:
    sentences = [
        "Cats sleep a lot.",
        "Refunds take a while.",
        "The refund window is 30 days.",
        "Dogs bark.",
        "The window is open.",
        "Rain.",
    ]
    # the two that share words, then the earliest of the rest; in the text's order
    assert closest(["How long is the refund window?"], sentences, None) == [[0, 2, 4]]


@pytest.mark.parametrize(
    ("answer", "reference", "reason"),
    [
        (
            "You can get a refund within 14 days.",
            "A full refund is given within 30 days of purchase.",
            "says 14 days; the evidence says 30 days",
        ),
        (
            "团队版现价299元，按年付费。",
            "团队版现价199元，按年付费。",
            "says 299元; the evidence says 199元",
        ),
    ],
)
def test_rag_6_claims_overrides_a_yes_to_a_number_stated_otherwise(
    answer: str, reference: str, reason: str
) -> None:
    """The released option set (rag-6-claims) checks numbers on both sides of answer
    correctness, in English and Chinese; the judge's "yes" stands in rag-6."""

    sample = correctness_sample(answer, reference)
    judge = ScriptedJudge([0.9, 0.9])  # short sentences: no claims written
    result = AnswerCorrectness().score(
        sample, Tools(judge=judge, prompts=PROMPT_SETS["rag-6-claims"])
    )
    judge.assert_done()
    assert result.details["support"] == [0.0] and result.details["coverage"] == [0.0]
    assert result.details["hard_facts"] == [{"statement": 0, "reason": reason}]
    assert result.details["reference_hard_facts"][0]["statement"] == 0
    assert result.score == 0.0
    reference_mode = "claims+hard-facts" if "元" in answer else "sentences+hard-facts"
    modes = {"answer": "sentences+hard-facts", "reference": reference_mode}
    assert result.details["statement_modes"] == modes
    plain = AnswerCorrectness().score(sample, Tools(judge=ScriptedJudge([0.9, 0.9]), prompts=RAG_6))
    assert plain.score == pytest.approx(0.9) and "hard_facts" not in plain.details
    assert "statement_modes" not in plain.details


def test_rag_6_claims_writes_a_chinese_references_claims_only() -> None:

    chosen = PROMPT_SETS["rag-6-claims"].rag
    assert chosen.statement_mode("answer_correctness.reference", "zh").claims
    assert not chosen.statement_mode("answer_correctness.reference", "en").claims
    assert not chosen.statement_mode("answer_correctness", "zh").claims
    assert chosen.statement_mode("faithfulness", "en") == StatementMode()
