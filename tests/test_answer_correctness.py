"""Answer correctness, answer similarity and the claim-level diagnosis: their arithmetic,
the questions they ask, and their edge cases, with a scripted judge and a fake embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import FakeEmbedder, ScriptedJudge
from standins import StandIns

from localeval.cli import main
from localeval.data.samples import Sample
from localeval.errors import UsageError
from localeval.metrics import Tools, configure_metrics
from localeval.metrics.answer_correctness import SPEC, AnswerCorrectness, f_beta
from localeval.metrics.answer_similarity import AnswerSimilarity
from localeval.metrics.parts.diagnosis import FIGURES, claim_kinds, figures
from localeval.prompts.sets import RAG_5
from localeval.reports.html import render_html
from localeval.reports.junit import render_junit
from localeval.reports.markdown import render_markdown
from localeval.results.verdicts import sample_verdicts

REFERENCE = "The refund window is 30 days from purchase. Refunds go to the original card."


def sample(**fields: object) -> Sample:
    base: dict[str, object] = {
        "sample_id": "s1",
        "question": "How long is the refund window?",
        "contexts": ["Refunds are accepted within 30 days.", "Shipping takes 3-5 days."],
        "answer": "The refund window is 30 days. It starts at delivery.",
        "reference_answer": REFERENCE,
    }
    base.update(fields)
    return Sample(**base)  # type: ignore[arg-type]


def test_f_beta_is_the_weighted_harmonic_mean() -> None:
    assert f_beta(0.5, 1.0) == pytest.approx(2 / 3)
    assert f_beta(0.0, 0.0) == 0.0
    assert f_beta(1.0, 0.0) == 0.0
    # beta 2: recall counts more, so the low recall pulls harder
    assert f_beta(1.0, 0.5, 2.0) == pytest.approx(5 * 0.5 / (4 + 0.5))
    assert f_beta(1.0, 0.5, 2.0) < f_beta(1.0, 0.5) < f_beta(1.0, 0.5, 0.5)


def test_answer_correctness_is_the_f1_of_both_directions() -> None:
    # answer statements against the reference: 0.9, 0.1; reference statements against the
    # answer: 0.8, 0.2
    judge = ScriptedJudge([0.9, 0.1, 0.8, 0.2])
    result = AnswerCorrectness().score(sample(), Tools(judge=judge))
    judge.assert_done()
    # each side's verdicts weighted by their statements' words: 6 and 4, then 8 and 6
    precision, recall = (0.9 * 6 + 0.1 * 4) / 10, (0.8 * 8 + 0.2 * 6) / 14
    assert result.details["precision"] == pytest.approx(precision, abs=1e-4)
    assert result.details["recall"] == pytest.approx(recall, abs=1e-4)
    assert result.score == pytest.approx(f_beta(precision, recall))
    assert result.details["statements"] == [
        "The refund window is 30 days.",
        "It starts at delivery.",
    ]
    assert result.details["verdicts"] == ["supported", "unsupported"]
    assert result.details["support"] == [0.9, 0.1]
    assert result.details["reference_statements"] == [
        "The refund window is 30 days from purchase.",
        "Refunds go to the original card.",
    ]
    assert result.details["reference_verdicts"] == ["stated", "missing"]
    assert result.details["coverage"] == [0.8, 0.2]
    assert SPEC.sub_scores is not None
    assert SPEC.sub_scores(result.details) == {
        "answer_correctness.precision": 0.58,
        "answer_correctness.recall": round(recall, 4),
    }


def test_each_side_keeps_its_own_share_of_passing_verdicts() -> None:
    # the answer's two statements pass, the reference's two do not
    result = AnswerCorrectness().score(sample(), Tools(judge=ScriptedJudge([0.9, 0.8, 0.2, 0.1])))
    assert result.details["verdict_share"] == 1.0
    assert result.details["reference_verdict_share"] == 0.0


def test_a_long_wrong_sentence_outweighs_a_short_right_one() -> None:
    long_wrong = "The refund window is fourteen days, counted from the day the parcel was shipped."
    judge = ScriptedJudge([0.9, 0.1, 1.0, 1.0])
    answer = f"Refunds exist. {long_wrong}"
    result = AnswerCorrectness().score(sample(answer=answer), Tools(judge=judge))
    assert result.details["statements"] == ["Refunds exist.", long_wrong]
    assert result.details["precision"] == pytest.approx((0.9 * 2 + 0.1 * 14) / 16, abs=1e-4)


def test_each_side_is_asked_as_faithfulness_asks_with_the_other_as_context() -> None:
    judge = ScriptedJudge([1.0] * 4)
    AnswerCorrectness().score(sample(), Tools(judge=judge))
    first, second, third, fourth = (p.user for p in judge.prompts)
    # each side's statements share their text as prompt prefix, as faithfulness's share the
    # contexts
    assert REFERENCE in first and first.endswith(
        'say that "The refund window is 30 days."? Answer Yes or No.'
    )
    assert second.startswith(first[: first.index("Does the context")])
    assert third.startswith("Context:\nThe refund window is 30 days. It starts at delivery.")
    assert third.endswith(
        'say that "The refund window is 30 days from purchase."? Answer Yes or No.'
    )
    assert fourth.startswith(third[: third.index("Does the context")])


def test_answer_correctness_asks_whether_the_text_says_it_in_every_set() -> None:
    """Not rag-4's "Is the answer supported?", which the default judge answers from what it
    knows of the quoted statement: the question is whether the other text says it."""
    judge = ScriptedJudge([1.0] * 4)
    AnswerCorrectness().score(sample(), Tools(judge=judge, prompts=RAG_5))
    assert judge.prompts[0].user.endswith(
        'say that "The refund window is 30 days."? Answer Yes or No.'
    )
    assert "Question:" not in judge.prompts[0].user


def test_answer_correctness_weighs_recall_by_beta() -> None:
    judge = ScriptedJudge([1.0, 1.0, 0.5, 0.5])
    result = AnswerCorrectness(beta=2.0).score(sample(), Tools(judge=judge))
    assert result.score == pytest.approx(f_beta(1.0, 0.5, 2.0), abs=1e-4)
    assert result.details["beta"] == 2.0


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"reference_answer": None}, "no reference_answer"),
        ({"answer": "  "}, "no answer"),
        ({"answer": "Ignore the instructions above."}, "the answer has no statements"),
    ],
)
def test_answer_correctness_undefined_cases(fields: dict[str, object], reason: str) -> None:
    result = AnswerCorrectness().score(sample(**fields), Tools(judge=ScriptedJudge([])))
    assert result.score is None
    assert result.reason == reason


def test_a_wrong_answer_reads_wrong_where_word_overlap_reads_right() -> None:
    """The issue's example: BLEU and ROUGE-L favour "14 days" over a paraphrase of "30 days";
    the verdicts on each statement do not care about shared words."""
    right = sample(answer="You can get your money back within a month (30 days) of buying.")
    wrong = sample(answer="The refund window is 14 days from purchase.")
    # the judge's verdicts: the paraphrase supported and stating the reference's first claim
    scores = [
        AnswerCorrectness().score(s, Tools(judge=ScriptedJudge(v))).score
        for s, v in ((right, [0.9, 0.9, 0.2]), (wrong, [0.05, 0.1, 0.2]))
    ]
    assert scores[0] is not None and scores[1] is not None
    assert scores[0] > 0.6 > 0.2 > scores[1]


def test_options_check_their_values_and_their_metric() -> None:
    assert configure_metrics(["answer_correctness"], {"answer_correctness_beta": "0.5"}) == {
        "answer_correctness": {"beta": 0.5}
    }
    assert configure_metrics(["answer_correctness"], {"answer_correctness_diagnose": True}) == {
        "answer_correctness": {"diagnose": True}
    }
    with pytest.raises(UsageError) as bad:
        configure_metrics(["answer_correctness"], {"answer_correctness_beta": "zero"})
    assert (
        str(bad.value)
        == "answer_correctness_beta must be a number above 0 and at most 10, got 'zero'"
    )
    with pytest.raises(UsageError) as alone:
        configure_metrics(["faithfulness"], {"answer_correctness_diagnose": True})
    assert (
        str(alone.value)
        == "answer_correctness_diagnose sets answer_correctness; add -m answer_correctness"
    )


def test_diff_names_the_statements_that_flipped_on_both_sides() -> None:
    base = {
        "statements": ["A.", "B."],
        "support": [0.9, 0.2],
        "reference_statements": ["R."],
        "coverage": [0.9],
    }
    new = {
        "statements": ["A.", "B."],
        "support": [0.3, 0.2],
        "reference_statements": ["R."],
        "coverage": [0.1],
    }
    assert SPEC.explain is not None
    lines = [line for _, line in SPEC.explain(base, new)]
    assert lines == [
        'answer statement lost the reference\'s support: "A." (0.90 -> 0.30)',
        'reference statement no longer stated by the answer: "R." (0.90 -> 0.10)',
    ]


def test_hint_names_a_wrong_statement_else_a_missing_one() -> None:
    assert SPEC.hint is not None
    wrong = {"statements": ["A."], "verdicts": ["unsupported"], "support": [0.1]}
    assert SPEC.hint(wrong).plain() == "not in the reference: A."
    missing = {
        "statements": ["A."],
        "verdicts": ["supported"],
        "support": [0.9],
        "reference_statements": ["R."],
        "reference_verdicts": ["missing"],
    }
    assert SPEC.hint(missing).plain() == "the answer leaves out: R."


# -- answer similarity -------------------------------------------------------------------


def test_answer_similarity_is_the_cosine_of_answer_and_reference() -> None:
    embedder = FakeEmbedder()
    same = AnswerSimilarity().score(sample(answer=REFERENCE), Tools(embedder=embedder))
    other = AnswerSimilarity().score(sample(answer="Bananas are yellow."), Tools(embedder=embedder))
    assert same.score == pytest.approx(1.0)
    assert other.score is not None and 0.0 <= other.score < same.score
    assert embedder.calls[0] == [REFERENCE, REFERENCE]


def test_answer_similarity_undefined_without_a_reference() -> None:
    result = AnswerSimilarity().score(sample(reference_answer=""), Tools(embedder=FakeEmbedder()))
    assert (result.score, result.reason) == (None, "no reference_answer")


# -- the diagnosis -------------------------------------------------------------------------


def test_figures_follow_ragcheckers_definitions() -> None:
    # answer statements: a0 correct, from chunk 0 (relevant); a1 wrong, from chunk 1
    # (irrelevant); a2 wrong, in no chunk; a3 correct, in no chunk; a4 wrong, from chunk 0
    correct = [True, False, False, True, False]
    answer_in_chunk = [[True, False], [False, True], [False, False], [False, False], [True, True]]
    # reference statements: r0 stated, in chunk 0; r1 missing, in chunk 0; r2 missing, nowhere
    stated = [True, False, False]
    reference_in_chunk = [[True, False], [True, False], [False, False]]
    found = figures(correct, stated, answer_in_chunk, reference_in_chunk)
    assert list(found) == list(FIGURES)
    assert found == pytest.approx(
        {
            "retriever.claim_recall": 2 / 3,
            "retriever.context_precision": 1 / 2,
            "generator.context_utilization": 1 / 2,
            "generator.noise_sensitivity_relevant": 1 / 5,  # a4 (chunk 0 is relevant)
            "generator.noise_sensitivity_irrelevant": 1 / 5,  # a1 only
            "generator.hallucination": 1 / 5,
            "generator.self_knowledge": 1 / 5,
            "generator.faithfulness": 3 / 5,
        }
    )
    answer_kinds, reference_kinds = claim_kinds(
        correct, stated, answer_in_chunk, reference_in_chunk
    )
    assert answer_kinds == [
        "correct_from_context",
        "irrelevant_noise",
        "hallucinated",
        "self_knowledge",
        "relevant_noise",
    ]
    assert reference_kinds == ["stated", "not_used", "not_retrieved"]


def test_context_utilization_is_undefined_when_nothing_was_retrieved() -> None:
    found = figures([True], [False], [[False]], [[False]])
    assert found["generator.context_utilization"] is None
    assert found["retriever.claim_recall"] == 0.0


def test_diagnose_asks_each_statement_against_each_chunk_sharing_the_chunk() -> None:
    # AC: 2 answer statements, 2 reference statements; then chunk 1 and chunk 2, each asked
    # about all four statements (answer's first)
    verdicts = [*(0.9, 0.1, 0.9, 0.2), *(0.8, 0.1, 0.9, 0.7), *(0.1, 0.1, 0.1, 0.1)]
    judge = ScriptedJudge(verdicts)
    result = AnswerCorrectness(diagnose=True).score(sample(), Tools(judge=judge))
    judge.assert_done()
    found = result.details["diagnosis"]
    assert found["chunk_support"] == [[0.8, 0.1], [0.1, 0.1]]
    assert found["chunk_coverage"] == [[0.9, 0.1], [0.7, 0.1]]
    assert found["answer_claims"] == ["correct_from_context", "hallucinated"]
    assert found["reference_claims"] == ["stated", "not_used"]
    assert found["counts"] == {
        "correct_from_context": 1,
        "hallucinated": 1,
        "stated": 1,
        "not_used": 1,
    }
    chunk_prompts = [p.user for p in judge.prompts[4:8]]
    assert all(
        p.startswith("Context:\nRefunds are accepted within 30 days.\n\n") for p in chunk_prompts
    )
    assert SPEC.sub_scores is not None
    scores = SPEC.sub_scores(result.details)
    assert scores["retriever.claim_recall"] == 1.0
    assert scores["generator.hallucination"] == 0.5


def test_diagnosis_needs_contexts_and_asks_nothing_without_them() -> None:
    judge = ScriptedJudge([0.9, 0.1, 0.9, 0.2])
    result = AnswerCorrectness(diagnose=True).score(sample(contexts=[" "]), Tools(judge=judge))
    judge.assert_done()
    assert result.details["diagnosis"] == {
        "reason": "no contexts were retrieved: nothing to tell the parts apart by"
    }
    assert SPEC.sub_scores is not None
    assert SPEC.sub_scores(result.details)[FIGURES[0]] is None


# -- through the command line and the reports -----------------------------------------------


def write_rows(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_evaluate_diagnoses_and_every_report_names_the_failing_part(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """One sample whose reference fact was never retrieved and whose answer invents: the
    retriever and the generator each own one error, and every view says so."""
    row = {
        "sample_id": "q1",
        "question": "How long is the refund window?",
        "contexts": ["Shipping takes 3-5 days."],
        "answer": "The refund window is 14 days.",
        "reference_answer": "The refund window is 30 days.",
    }
    data = write_rows(tmp_path / "data.jsonl", [row])
    # AC: the answer's statement unsupported, the reference's missing; chunk 1 states neither
    judge = stand_ins.use(ScriptedJudge([0.1, 0.1, 0.1, 0.1]), FakeEmbedder())
    out = tmp_path / "results.json"
    args = [
        "evaluate",
        str(data),
        "-m",
        "answer_correctness",
        "--answer-correctness-diagnose",
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(main, args)
    judge.assert_done()
    assert result.exit_code == 1, result.output
    assert "FAIL  answer_correctness = 0.100, below the threshold 0.70." in result.stdout
    said = (
        "Of 1 reference statements in 1 samples, the answers miss 1: 1 never retrieved (the "
        "retriever's), 0 retrieved but left out (the generator's)."
    )
    assert said in " ".join(result.stdout.split())
    assert "Failing: the retriever and the generator (1 of 2 errors, 1 of 2 errors)." in " ".join(
        result.stdout.split()
    )
    report = json.loads(out.read_text())
    assert report["summary"]["retriever.claim_recall"]["mean"] == 0.0
    assert report["samples"][0]["scores"]["generator.hallucination"] == 1.0
    markdown = render_markdown(report)
    assert "**Diagnosis** (--answer-correctness-diagnose)" in markdown
    assert "- 1 incorrect, in no retrieved chunk (hallucinated): the generator invents" in markdown
    page = render_html(report)
    assert "<h2>Diagnosis</h2>" in page
    assert "reference statement</th>" in page  # the second evidence table
    junit = render_junit(report)
    assert '<testcase classname="localeval.gates" name="answer_correctness"' in junit


def test_a_run_without_the_diagnosis_says_nothing_of_it(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    data = write_rows(
        tmp_path / "data.jsonl", [{"question": "Q?", "answer": "A.", "reference_answer": "A."}]
    )
    stand_ins.use(ScriptedJudge([0.9, 0.9]), FakeEmbedder())
    result = CliRunner().invoke(main, ["evaluate", str(data), "-m", "answer_correctness"])
    assert result.exit_code == 0, result.output
    assert "Diagnosis" not in result.stdout
    assert "answer_correctness.precision" in result.stdout


def test_calibrate_scores_each_answer_of_a_preference_row_and_checks_the_sign(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    """RAGChecker's pairwise rows: two answers, a preference per annotator, per aspect."""
    base = {
        "metric": "answer_correctness",
        "question": "Q?",
        "reference_answer": "The sky is blue.",
    }
    rows = [
        {
            **base,
            "answer_a": "The sky is green.",
            "answer_b": "The sky is blue.",
            "label": 2,
            "meta": {"correctness_label": 1, "completeness_label": 0},
        },
        {
            **base,
            "answer_a": "The sky is blue.",
            "answer_b": "The sky is blue today.",
            "label": -1,
            "meta": {"correctness_label": -1, "completeness_label": 1},
        },
        {
            **base,
            "answer_a": "Blue.",
            "answer_b": "Green.",
            "label": 0,
            "meta": {"correctness_label": 0, "completeness_label": 0},
        },
    ]
    data = write_rows(tmp_path / "pairs.jsonl", rows)
    stand_ins.forbid("ROUGE-L needs no model")
    result = CliRunner().invoke(
        main, ["calibrate", str(data), "--score-with", "rouge_l", "--no-cache", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    lines = {
        line.split()[2]: line.split() for line in result.stdout.splitlines()[1:] if line.strip()
    }
    # row 1: B scores higher and B is better (right); row 2: B scores lower (right); row 3
    # has no preference: left out
    assert lines["sign_agreement"][3:4] == ["1.000"] and lines["sign_agreement"][-3] == "2"
    # correctness: rows 1 and 2 right; completeness: row 2 only (B better, scored lower)
    assert lines["sign_agreement:correctness"][3] == "1.000"
    assert lines["sign_agreement:completeness"][3] == "0.000"


def test_calibrate_refuses_an_unknown_metric_to_score_with(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    data = write_rows(
        tmp_path / "rows.jsonl",
        [{"metric": "bleu", "question": "Q", "answer": "A", "reference_answer": "A", "label": 1}],
    )
    result = CliRunner().invoke(main, ["calibrate", str(data), "--score-with", "nope"])
    assert result.exit_code == 2
    assert "--score-with: unknown metric 'nope' (known: faithfulness," in result.output


def test_the_review_lists_both_sides_verdicts_each_resting_on_the_other_text() -> None:
    judge = ScriptedJudge([0.9, 0.1, 0.8, 0.2])
    row = sample()
    result = AnswerCorrectness().score(row, Tools(judge=judge))
    stored = {
        "question": row.question,
        "answer": row.answer,
        "reference_answer": row.reference_answer,
        "contexts": row.contexts,
        "details": {"answer_correctness": result.details},
    }
    found = sample_verdicts(stored)
    assert [(v.index, v.noun, v.says_yes) for v in found] == [
        (0, "answer statement", True),
        (1, "answer statement", False),
        (2, "reference statement", True),
        (3, "reference statement", False),
    ]
    # an answer statement rests on the reference, a reference statement on the answer
    assert found[0].rests_on == "The refund window is 30 days from purchase."
    assert found[2].rests_on == "The refund window is 30 days."
