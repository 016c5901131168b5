"""The runner: metric order, undefined scores for prompts too long, usage accounting."""

from __future__ import annotations

import pytest
from fakes import FakeEmbedder, ScriptedJudge

from localeval.data.samples import Sample
from localeval.engine import describe_run, evaluate, order_metrics
from localeval.errors import PromptTooLongError, UsageError
from localeval.judge import Prompt
from localeval.metrics import Tools

SAMPLE = Sample("s1", "Q?", ["c1"], "It is so.", "It is so.")


def test_metrics_run_in_prefix_sharing_order() -> None:
    assert order_metrics(["answer_relevancy", "faithfulness", "context_precision"]) == [
        "context_precision",
        "faithfulness",
        "answer_relevancy",
    ]
    assert order_metrics([]) == [
        "context_precision",
        "faithfulness",
        "context_recall",
        "answer_relevancy",
    ]
    with pytest.raises(UsageError, match="unknown metric 'fluency'"):
        order_metrics(["fluency"])


class TooLongJudge(ScriptedJudge):
    def yes_probability(self, prompt: Prompt) -> float:
        raise PromptTooLongError(9000, 8192)


def test_prompt_too_long_makes_the_metric_undefined_with_the_reason() -> None:
    run = evaluate([SAMPLE], ["faithfulness"], Tools(judge=TooLongJudge()))
    result = run.samples[0].results["faithfulness"]
    assert result.score is None
    assert result.reason == (
        "too long for the judge: 9000 tokens needed, context holds 8192 (raise n_ctx in "
        "models.toml or shorten the contexts)"
    )
    assert run.summary()["faithfulness"].n_undefined == 1


def test_usage_counts_only_this_run() -> None:
    judge = ScriptedJudge([0.5, 0.5, 0.5, 0.5])
    evaluate([SAMPLE], ["faithfulness"], Tools(judge=judge))
    run = evaluate([SAMPLE], ["faithfulness", "context_recall"], Tools(judge=judge))
    assert run.usage.judge_calls == 2  # not the call of the first run
    assert run.info.metrics == ["faithfulness", "context_recall"]
    evaluate([SAMPLE], ["faithfulness"], Tools(judge=judge, embedder=FakeEmbedder()))
    judge.assert_done()


def test_run_records_the_judge_settings_that_change_its_numbers() -> None:
    judge = ScriptedJudge([])
    assert describe_run([], Tools(judge=judge)).judge == {
        "name": judge.name,
        "sha256": judge.sha256,
    }
    judge.settings = {"batch_size": 64, "call_protocol": 2}  # type: ignore[attr-defined]
    info = describe_run([], Tools(judge=judge))
    assert info.judge is not None and info.judge["settings"] == {
        "batch_size": 64,
        "call_protocol": 2,
    }
