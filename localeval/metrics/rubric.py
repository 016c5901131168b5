"""Rubric: the judge scores the answer 0-10 on named criteria and overall, with feedback.

Inputs: question, answer; contexts and reference_answer are shown to the judge when given.
Output: the overall score divided by 10, in [0, 1]. Each score (per criterion and overall)
is an expected value: the judge's probability distribution over the replies "0".."10",
read from the logits under those eleven options, weighted by the numbers. This gives
fewer ties and steadier scores than the single most likely digit.
Criteria: accuracy, completeness, clarity by default (localeval.data.criteria); users name
their own with a one-line description each.
Details: per criterion its raw 0-10 score, its most likely digit and the distribution;
the overall raw score likewise; one sentence of feedback (grammar-constrained, at most
FEEDBACK_CHARS characters). `criterion_scores` turns a result into per-criterion scores
normalised to [0, 1] ("rubric.accuracy": 0.78), its sub-scores (SPEC.sub_scores), which
reports list and summarise beside "rubric".
Undefined without a question or an answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from localeval.data.criteria import (
    DEFAULT_CRITERIA,
    Criterion,
    criteria_from_options,
    load_criteria_file,
)
from localeval.data.samples import Sample
from localeval.errors import UsageError, param
from localeval.judge import Judge, Prompt
from localeval.metrics.base import (
    MetricBase,
    MetricOption,
    MetricResult,
    MetricSpec,
    Tools,
    missing_field,
    require_judge,
)
from localeval.prompts.rubric import SCORE_OPTIONS
from localeval.schema import Object, Str
from localeval.text import detect_language, split_sentences

FEEDBACK_CHARS = 200
FEEDBACK_SCHEMA = Object((("feedback", Str(FEEDBACK_CHARS)),))


def expected_score(judge: Judge, prompt: Prompt) -> dict[str, Any]:
    """The judge's expected 0-10 score for a prompt, its most likely digit, the distribution."""
    probabilities = judge.choice_probabilities(prompt, SCORE_OPTIONS)
    expected = sum(n * p for n, p in enumerate(probabilities))
    return {
        "score": round(expected, 4),
        "most_likely": max(range(len(probabilities)), key=lambda n: probabilities[n]),
        "distribution": [round(p, 4) for p in probabilities],
    }


def first_sentence(text: str) -> str:
    """The feedback is asked for in one sentence; a small judge sometimes writes on."""
    sentences = split_sentences(text)
    return sentences[0] if sentences else text.strip()


class Rubric(MetricBase):
    name = "rubric"
    needs = ("question", "answer")
    uses_judge = True
    uses_embedder = False

    def __init__(self, criteria: Sequence[Criterion] = DEFAULT_CRITERIA):
        self.criteria = tuple(criteria)
        #: the criteria as plain text, recorded with each run's metric settings so that runs
        #: with different criteria are never resumed into or compared as the same
        self.criteria_text = "; ".join(f"{c.name}: {c.description}" for c in self.criteria)

    def fields_read(self, sample: Sample) -> tuple[str, ...]:
        # the judge is shown the contexts and the reference too, when the sample has them
        return (*self.needs, "contexts", "reference_answer")

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.answer is not None
        judge, prompts = require_judge(tools), tools.prompts.rubric
        shown = (sample.question, sample.answer, sample.contexts, sample.reference_answer)
        criteria = {
            c.name: {
                "description": c.description,
                **expected_score(judge, prompts.criterion_score(*shown, c)),
            }
            for c in self.criteria
        }
        overall = expected_score(judge, prompts.overall_score(*shown))
        language = detect_language(sample.answer)
        reply = judge.generate(prompts.feedback(*shown, language), FEEDBACK_SCHEMA)
        return MetricResult(
            overall["score"] / 10.0,
            {
                "scale": "0-10",
                "criteria": criteria,
                "overall": overall,
                "feedback": first_sentence(reply["feedback"]),
            },
        )


def criterion_key(name: str) -> str:
    """The name a criterion's normalised score is reported under: "rubric.<criterion>"."""
    return f"rubric.{name}"


def criterion_scores(details: Mapping[str, Any]) -> dict[str, float | None]:
    """Each criterion a rubric result's details hold, its score normalised to [0, 1] ("rubric.
    accuracy": 0.78), in the criteria's order; {} for an undefined result, which holds none.
    Read from the details alone, so that a stored run or a results file gives them too."""
    scored = details.get("criteria")
    if not isinstance(scored, Mapping):
        return {}
    return {criterion_key(name): _normalised(entry) for name, entry in scored.items()}


def _normalised(entry: Any) -> float | None:
    score = entry.get("score") if isinstance(entry, Mapping) else None
    if isinstance(score, bool) or not isinstance(score, int | float):
        return None
    return score / 10.0


def configure(values: Mapping[str, Any], requested: bool) -> dict[str, Any]:
    """The criteria from --rubric-criteria FILE or --rubric-criterion options."""
    file, inline = values.get("rubric_criteria"), values.get("rubric_criterion") or ()
    if file is not None and inline:
        raise UsageError(
            f"give the rubric's criteria either with {param('rubric_criteria')} FILE or with "
            f"{param('rubric_criterion')}, not both"
        )
    if (file is not None or inline) and not requested:
        raise UsageError(
            f"{param('rubric_criteria')} and {param('rubric_criterion')} set the rubric metric's "
            "criteria; add -m rubric"
        )
    if file is not None:
        return {"criteria": load_criteria_file(file)}
    if inline:
        return {"criteria": criteria_from_options(inline)}
    return {}


SPEC = MetricSpec(
    Rubric,
    help="judge scores 0-10 per criterion",
    order=70,
    options=(
        MetricOption(
            "--rubric-criteria",
            "rubric_criteria",
            "TOML or YAML file of rubric criteria: a table 'criteria' of name = one-line "
            "description. Default criteria: accuracy, completeness, clarity.",
            is_path=True,
            old_flag="--criteria",
            old_dest="criteria_file",
        ),
        MetricOption(
            "--rubric-criterion",
            "rubric_criterion",
            "A rubric criterion given inline; repeat for several (instead of --rubric-criteria).",
            metavar="'NAME: DESCRIPTION'",
            multiple=True,
            old_flag="--criterion",
            old_dest="criterion_options",
        ),
    ),
    configure=configure,
    sub_scores=criterion_scores,
)
