"""A metric's settings, which a run records and keys its evaluation on, come from its
explicit `settings()` (localeval.metrics.base.MetricBase's default: its public plain-valued
attributes); the built-in metrics' are what they were before settings() existed."""

from __future__ import annotations

import json
from typing import Any

from test_reference_doc import built_in_metrics

from localeval.engine import metric_settings
from localeval.metrics import MetricBase, MetricResult, MetricWithSettings, Tools, build_metric
from localeval.metrics.answer_correctness import AnswerCorrectness
from localeval.metrics.context_recall import ContextRecall
from localeval.metrics.faithfulness import Faithfulness

RUBRIC = (
    "accuracy: the facts in the answer are correct; completeness: the answer covers "
    "everything the question asks; clarity: the answer is clear and easy to understand"
)
#: each built-in metric's settings with default options, as runs recorded them before
#: metrics had settings() (the rule then: public plain-valued attributes, sorted)
RECORDED = {
    "answer_correctness": {"beta": 1.0, "diagnose": False},
    "answer_relevancy": {"n_questions": 0},
    "answer_similarity": {},
    "bleu": {},
    "context_precision": {"usefulness": "en=embedder zh=judge"},
    "context_recall": {},
    "faithfulness": {},
    "rouge_l": {},
    "rubric": {"criteria_text": RUBRIC},
}


def fingerprint(settings: dict[str, Any]) -> str:
    return json.dumps(settings, ensure_ascii=False)


def test_every_built_in_metric_keeps_its_fingerprint() -> None:
    assert set(RECORDED) == built_in_metrics()
    for name, recorded in RECORDED.items():
        metric = build_metric(name)
        assert isinstance(metric, MetricWithSettings), name
        # byte for byte, key order included
        assert fingerprint(metric_settings(metric)) == fingerprint(recorded), name


def test_the_statements_given_are_recorded_and_none_is_not() -> None:
    for kind in (Faithfulness, ContextRecall):
        assert kind().settings() == {} and kind().statements is None
        assert kind(statements="claims").settings() == {"statements": "claims"}
    corrected = AnswerCorrectness(beta=0.5, diagnose=True, statements="claims")
    assert fingerprint(corrected.settings()) == fingerprint(
        {"beta": 0.5, "diagnose": True, "statements": "claims"}
    )


class WithState(MetricBase):
    """A plugin's metric whose public attributes are not all settings."""

    name = "with_state"
    needs = ("answer",)
    uses_judge = False
    uses_embedder = False

    def __init__(self) -> None:
        self.window = 3
        self.cache_path = "/tmp/with-state"  # where it keeps things: not a setting

    def settings(self) -> dict[str, Any]:
        return {"window": self.window}

    def score(self, sample: Any, tools: Tools) -> MetricResult:
        return MetricResult(1.0)


class Plain:
    """A plugin's metric written before settings(): its public attributes, as before."""

    name = "plain"
    needs = ("answer",)
    uses_judge = False
    uses_embedder = False

    def __init__(self) -> None:
        self.window = 3
        self._private = "left out"

    def score(self, sample: Any, tools: Tools) -> MetricResult:
        return MetricResult(1.0)


def test_a_plugin_says_its_settings_or_keeps_the_attribute_rule() -> None:
    assert metric_settings(WithState()) == {"window": 3}
    assert metric_settings(Plain()) == {"window": 3}
    state = WithState()
    state.cache_path = "/elsewhere"
    assert metric_settings(state) == metric_settings(WithState())
