"""plain_language: a company rubric asked of the judge: is the answer written in plain
language a customer understands, without internal jargon? The score is the judge's
P(Yes).

The judge's answers are cached like the built-in metrics' (a re-run asks nothing). The
wording is this plugin's own, not part of the judge's prompt set, so it carries its own
version as a setting (`wording`): runs record a metric's settings, and runs asked in
other words are neither resumed into each other nor compared as equals. Text from the
sample goes through `as_data`, the defence the built-in prompts use against instructions
hidden in the data.
"""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.judge import Prompt
from localeval.metrics.base import MetricResult, MetricSpec, Tools, missing_field, require_judge
from localeval.prompts.rag import SYSTEM_JUDGE, as_data

QUESTION = (
    "\n\nIs the answer above written in plain language that a customer understands, without "
    "internal jargon? Answer Yes or No."
)


class PlainLanguage:
    name = "plain_language"
    needs = ("answer",)
    uses_judge = True
    uses_embedder = False

    def __init__(self) -> None:
        #: the version of the words below: change them, change this
        self.wording = "plain-1"

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        answer = as_data((sample.answer or "").strip())
        # lasting=0: nothing before the question outlives this answer, so a judge that
        # keeps contexts on disk for the next run keeps nothing of this prompt
        prompt = Prompt.of(SYSTEM_JUDGE, f"Answer:\n{answer}", QUESTION, lasting=0)
        plain = require_judge(tools).yes_probability(prompt)
        return MetricResult(plain, {"p_plain": round(plain, 4)})


SPEC = MetricSpec(
    PlainLanguage,
    help="the judge's P(the answer is in plain language, without jargon)",
    gate=0.5,
    cause="answers use internal jargon a customer does not understand",
    remedies=("ask the generator to write for customers and to explain any term it uses",),
)
