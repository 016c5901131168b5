"""BLEU and ROUGE-L against the reference answer: values checked against sacrebleu and
rouge-score, CJK tokenized by character, and no model loaded when only these run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu
from click.testing import CliRunner
from rouge_score.rouge_scorer import RougeScorer
from standins import StandIns

from localeval.cli import main
from localeval.data.samples import Sample
from localeval.metrics import DEFAULT_METRICS, REGISTRY, Tools, build_metric
from localeval.metrics.answer_similarity import AnswerSimilarity
from localeval.metrics.bleu import Bleu
from localeval.metrics.parts.reference import ReferenceMetric
from localeval.metrics.parts.reference_tokens import rouge_tokens, space_cjk
from localeval.metrics.rouge import RougeL

NO_MODELS = Tools()


def scored(metric: Bleu | RougeL, answer: str | None, reference: str | None) -> float | None:
    sample = Sample("s", "q?", answer=answer, reference_answer=reference)
    return metric.score(sample, NO_MODELS).score


# -- BLEU --------------------------------------------------------------------------------


def test_bleu_english_equals_sacrebleu_default() -> None:
    answer, reference = "The cat sat on the mat.", "The cat is on the mat."
    expected = sacrebleu.sentence_bleu(answer, [reference]).score / 100
    assert scored(Bleu(), answer, reference) == pytest.approx(expected)
    assert expected == pytest.approx(0.48892302243490086)  # pinned: 85.7/66.7/40.0/25.0


def test_bleu_identical_is_one_and_disjoint_is_zero() -> None:
    text = "Refunds are processed within five business days."
    assert scored(Bleu(), text, text) == pytest.approx(1.0)
    assert scored(Bleu(), "Completely unrelated words here", text) == pytest.approx(0.0)


def test_bleu_short_answer_gets_brevity_penalty() -> None:
    reference = "the tower was finished in 1889 in paris"
    result = Bleu().score(
        Sample("s", "q", answer="the tower was", reference_answer=reference), NO_MODELS
    )
    assert result.details["brevity_penalty"] == pytest.approx(0.1889, abs=1e-4)  # exp(1 - 8/3)
    assert result.score == pytest.approx(
        sacrebleu.sentence_bleu("the tower was", [reference]).score / 100
    )


def test_bleu_chinese_is_by_character_and_equals_sacrebleu_zh() -> None:
    answer, reference = "我喜欢吃苹果。", "我喜欢吃香蕉。"
    # whitespace tokenization sees one word each: the classic score of 0
    assert sacrebleu.sentence_bleu(answer, [reference]).score == 0.0
    result = Bleu().score(Sample("s", "q", answer=answer, reference_answer=reference), NO_MODELS)
    expected = sacrebleu.sentence_bleu(answer, [reference], tokenize="zh").score / 100
    assert result.score == pytest.approx(expected)
    assert result.score == pytest.approx(0.4347208719449914)
    assert result.details["precisions"] == [71.4286, 50.0, 40.0, 25.0]
    assert result.details["answer_tokens"] == 7 and result.details["tokenizer"] == "zh"


def test_bleu_mixed_chinese_and_latin() -> None:
    answer, reference = "我用Python写代码", "我用Python写程序"
    expected = sacrebleu.sentence_bleu(answer, [reference], tokenize="zh").score / 100
    assert scored(Bleu(), answer, reference) == pytest.approx(expected)
    assert expected == pytest.approx(0.5081327481546149)  # 我/用/Python/写 + 2 differing


def test_bleu_japanese_kana_and_korean_are_by_character() -> None:
    # sacrebleu's zh tokenizer leaves kana and hangul unsplit; localeval splits them first
    ja_answer, ja_reference = "私はりんごが好きです", "私はバナナが好きです"
    assert scored(Bleu(), ja_answer, ja_reference) == pytest.approx(
        sacrebleu.sentence_bleu(
            " ".join(ja_answer), [" ".join(ja_reference)], tokenize="none"
        ).score
        / 100
    )
    ko = scored(Bleu(), "환불은 오일 걸립니다", "환불은 칠일 걸립니다")
    assert ko is not None and ko > 0.3
    assert space_cjk("a가b") == "a 가 b"


def test_bleu_undefined_without_reference() -> None:
    result = Bleu().score(Sample("s", "q", answer="x"), NO_MODELS)
    assert result.score is None and result.reason == "no reference_answer"


@pytest.mark.parametrize("metric", [Bleu(), RougeL(), AnswerSimilarity()], ids=lambda m: m.name)
@pytest.mark.parametrize(
    ("answer", "reference", "reason"),
    [(" ", "R.", "no answer"), ("A.", None, "no reference_answer")],
)
def test_every_metric_against_the_reference_is_undefined_without_both_texts(
    metric: ReferenceMetric, answer: str, reference: str | None, reason: str
) -> None:
    # no models given: a metric that went on to compare the texts would fail on the embedder
    result = metric.score(Sample("s", "q?", answer=answer, reference_answer=reference), NO_MODELS)
    assert (result.score, result.reason) == (None, reason)
    assert metric.needs == ("answer", "reference_answer")


# -- ROUGE-L -----------------------------------------------------------------------------


def test_rouge_l_english_equals_rouge_score_default() -> None:
    answer, reference = "The cat sat on the mat!", "The cat is on the mat."
    expected = RougeScorer(["rougeL"]).score(reference, answer)["rougeL"]
    result = RougeL().score(Sample("s", "q", answer=answer, reference_answer=reference), NO_MODELS)
    assert result.score == pytest.approx(expected.fmeasure)
    assert result.score == pytest.approx(5 / 6)  # LCS the cat on the mat: 5 of 6 each way


def test_rouge_l_precision_and_recall_differ_with_length() -> None:
    answer = "It was finished in 1889 after two years of work"
    reference = "finished in 1889"
    result = RougeL().score(Sample("s", "q", answer=answer, reference_answer=reference), NO_MODELS)
    assert result.details["recall"] == pytest.approx(1.0)
    assert result.details["precision"] == pytest.approx(3 / 10)
    assert result.score == pytest.approx(2 * 0.3 * 1.0 / 1.3)


def test_rouge_l_chinese_is_by_character() -> None:
    answer, reference = "我喜欢吃苹果。", "我喜欢吃香蕉。"
    assert RougeScorer(["rougeL"]).score(reference, answer)["rougeL"].fmeasure == 0.0
    # punctuation dropped: 6 characters each, LCS 我喜欢吃 = 4
    assert scored(RougeL(), answer, reference) == pytest.approx(4 / 6)


def test_rouge_l_mixed_and_non_ascii_latin() -> None:
    assert rouge_tokens("我用Python写代码，café!") == [
        "我",
        "用",
        "python",
        "写",
        "代",
        "码",
        "café",
    ]
    # LCS 我 用 python 写 of 6 tokens each
    assert scored(RougeL(), "我用Python写代码", "我用python写程序") == pytest.approx(4 / 6)


def test_rouge_l_undefined_when_reference_has_no_words() -> None:
    result = RougeL().score(Sample("s", "q", answer="x", reference_answer="..."), NO_MODELS)
    assert result.score is None and result.reason == "the reference_answer has no words"


def test_answer_without_words_scores_zero() -> None:
    assert scored(RougeL(), "?!", "A real reference.") == 0.0
    assert scored(Bleu(), "?!", "A real reference.") == 0.0


# -- registry and the command line -------------------------------------------------------


def test_registered_outside_the_default_set_without_models() -> None:
    for name in ("bleu", "rouge_l"):
        assert name in REGISTRY and name not in DEFAULT_METRICS
        metric = build_metric(name)
        assert not metric.uses_judge and not metric.uses_embedder


def test_cli_scores_chinese_without_loading_any_model(stand_ins: StandIns, tmp_path: Path) -> None:
    stand_ins.forbid("no model may be loaded for bleu/rouge_l")
    rows = [
        {
            "sample_id": "zh1",
            "question": "退款要多久？",
            "answer": "退款需要五个工作日。",
            "reference_answer": "退款在五个工作日内完成。",
        },
        {
            "sample_id": "zh2",
            "question": "营业时间？",
            "answer": "我们每天九点开门。",
            "reference_answer": "每天早上九点开门。",
        },
    ]
    data = tmp_path / "zh.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "-m",
            "bleu",
            "-m",
            "rouge_l",
            "-o",
            str(out),
            "--no-progress",
            "--threshold",
            "bleu=0.3",
        ],
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    for sample, row in zip(report["samples"], rows, strict=True):
        expected = (
            sacrebleu.sentence_bleu(row["answer"], [row["reference_answer"]], tokenize="zh").score
            / 100
        )
        assert sample["scores"]["bleu"] == pytest.approx(expected) and expected > 0
        assert sample["scores"]["rouge_l"] > 0.5
    assert report["run"]["judge"] is None and report["run"]["embedder"] is None
    mean = report["summary"]["bleu"]["mean"]
    assert mean == pytest.approx((0.3824602282967347 + 0.5133450480401705) / 2)
    assert report["gates"] == [{"metric": "bleu", "threshold": 0.3, "value": mean, "passed": True}]
    assert result.exit_code == 0, result.output
    strict = CliRunner().invoke(
        main, ["evaluate", str(data), "-m", "bleu", "--no-progress", "--threshold", "bleu=0.5"]
    )
    assert strict.exit_code == 1
    assert "FAIL  bleu = 0.448, below the threshold 0.50." in strict.output
