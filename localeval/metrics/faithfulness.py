"""Faithfulness: how much of the answer the retrieved passages support.

Inputs: question, contexts, answer.
Output: the mean, over the answer's statements, of the probability that the statement is
supported by the passages (the judge's P(Yes) through its calibration map for
"supported", when models.toml has one); in [0, 1], higher is better.
Details: statements, verdicts ("supported" / "unsupported", at 0.5, or at an uncalibrated
judge's own faithfulness threshold when models.toml gives one), support probabilities,
the judge's raw ones (`support_raw`) when calibrated, and `verdict_share`, the share of
"supported" verdicts (Ragas' reading; the mean gated better: docs/measurements/judge-quality.md).
Undefined when the answer or contexts are missing or the answer has no statements.
With an empty list of contexts nothing can be supported: the score is 0, said in details.
Contexts too long for the judge's window: see localeval.metrics.parts.long_context (each
statement is judged against windows of chunks, the best support kept).
"""

from __future__ import annotations

from localeval.data.samples import Sample
from localeval.metrics.base import EvidenceTable
from localeval.metrics.parts.explain import StatementWords
from localeval.metrics.parts.statements import (
    StatementEvidence,
    StatementGate,
    StatementsMetric,
    statements_spec,
)

NAME = "faithfulness"
SUPPORT = StatementEvidence(
    metric=NAME,
    text_name="the answer",
    probabilities="support",
    positive="supported",
    negative="unsupported",
    no_contexts_note="no contexts were retrieved, so no statement can be supported",
)


class Faithfulness(StatementsMetric):
    name = NAME
    needs = ("question", "contexts", "answer")
    evidence = SUPPORT

    def judged_text(self, sample: Sample) -> str | None:
        return sample.answer


SPEC = statements_spec(
    Faithfulness,
    order=10,
    default_rank=2,
    gate=StatementGate(
        0.80,
        cause="the generator invents beyond the retrieved context",
        remedies=(
            'a stricter system prompt ("answer only from the context, else say you don\'t know")',
            "temperature 0-0.1",
            "require citations of the context",
        ),
    ),
    words=StatementWords(
        noun="statement",
        yes="supported",
        no="unsupported",
        lost="lost support",
        gained="gained support",
        gone="no longer in the answer",
    ),
    hint=("unsupported", "unsupported", "least supported"),
    table=EvidenceTable("answer statement", "statements", "support", "unsupported", "answer"),
)
