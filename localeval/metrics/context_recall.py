"""Context recall: how much of the reference answer the retrieved passages cover.

Inputs: question, contexts, reference_answer.
Output: the mean, over the reference answer's sentences, of the judge's probability that
the sentence can be attributed to the passages; in [0, 1], higher is better.
Details: statements (the reference's sentences), verdicts ("attributed" / "not attributed",
at the judge's context_recall threshold as for faithfulness), attribution probabilities,
and `verdict_share`, the share of "attributed" verdicts (as for faithfulness).
Undefined without a reference answer or contexts, or when the reference has no statements.
With an empty list of contexts nothing is attributed: the score is 0, said in details.
Contexts too long for the judge's window: as for faithfulness
(localeval.metrics.parts.long_context).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localeval.data.samples import Sample
from localeval.metrics.base import (
    EvidenceTable,
    MetricBase,
    MetricResult,
    MetricSpec,
    Tools,
    missing_field,
)
from localeval.metrics.parts.explain import StatementWords, statement_changes, statement_hint
from localeval.metrics.parts.statements import (
    StatementEvidence,
    chosen_mode,
    configure_statements,
    judge_statements,
    statements_option,
)
from localeval.text import detect_language

NAME = "context_recall"
FLAG, DEST = "--cr-statements", "cr_statements"
ATTRIBUTION = StatementEvidence(
    metric=NAME,
    text_name="the reference answer",
    probabilities="attribution",
    positive="attributed",
    negative="not attributed",
    no_contexts_note="no contexts were retrieved, so nothing can be attributed",
)


class ContextRecall(MetricBase):
    name = NAME
    needs = ("question", "contexts", "reference_answer")
    uses_judge = True
    uses_embedder = False

    def __init__(self, statements: str | None = None):
        #: which statements are the judge's claims; None: the prompt set's choice
        self.statements = statements

    def settings(self) -> dict[str, Any]:
        # the statements' units are recorded only when given: the prompt set's choice
        # otherwise, which its version records
        return {} if self.statements is None else {"statements": self.statements}

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.reference_answer is not None and sample.contexts is not None
        # the reference's sentences, each asked as faithfulness asks the answer's
        mode = chosen_mode(tools, NAME, detect_language(sample.reference_answer), self.statements)
        return judge_statements(
            sample.reference_answer,
            sample.contexts,
            tools,
            ATTRIBUTION,
            sample.question,
            mode=mode,
        )


def configure(values: Mapping[str, Any], requested: bool) -> dict[str, Any]:
    """--cr-statements sentences|claims."""
    return configure_statements(values.get(DEST), requested, FLAG, NAME)


SPEC = MetricSpec(
    ContextRecall,
    order=30,
    default_rank=3,
    gate=0.70,
    cause="retrieval misses facts the answer needs",
    remedies=("a better embedding model", "hybrid BM25 + reranker retrieval", "query rewriting"),
    explain=statement_changes(
        "statements",
        "attribution",
        StatementWords(
            noun="reference statement",
            yes="attributed",
            no="unattributed",
            lost="no longer found in the contexts",
            gained="now found in the contexts",
            gone="no longer in the reference",
        ),
    ),
    hint=statement_hint("not attributed", "not in the contexts", "attribution", "least attributed"),
    table=EvidenceTable("reference statement", "statements", "attribution", "not attributed"),
    verdicts="attribution",
    verdict_kind="supported",
    options=(statements_option(FLAG, DEST, NAME),),
    configure=configure,
)
