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

from localeval.data.samples import Sample
from localeval.metrics.base import EvidenceTable
from localeval.metrics.parts.explain import StatementWords
from localeval.metrics.parts.statements import (
    StatementEvidence,
    StatementGate,
    StatementsMetric,
    statements_spec,
)

NAME = "context_recall"
ATTRIBUTION = StatementEvidence(
    metric=NAME,
    text_name="the reference answer",
    probabilities="attribution",
    positive="attributed",
    negative="not attributed",
    no_contexts_note="no contexts were retrieved, so nothing can be attributed",
)


class ContextRecall(StatementsMetric):
    name = NAME
    needs = ("question", "contexts", "reference_answer")
    evidence = ATTRIBUTION

    def judged_text(self, sample: Sample) -> str | None:
        # the reference's sentences, each asked as faithfulness asks the answer's
        return sample.reference_answer


SPEC = statements_spec(
    ContextRecall,
    order=30,
    default_rank=3,
    gate=StatementGate(
        0.70,
        cause="retrieval misses facts the answer needs",
        remedies=(
            "a better embedding model",
            "hybrid BM25 + reranker retrieval",
            "query rewriting",
        ),
    ),
    words=StatementWords(
        noun="reference statement",
        yes="attributed",
        no="unattributed",
        lost="no longer found in the contexts",
        gained="now found in the contexts",
        gone="no longer in the reference",
    ),
    hint=("not attributed", "not in the contexts", "least attributed"),
    table=EvidenceTable("reference statement", "statements", "attribution", "not attributed"),
    old=("--cr-statements", "cr_statements"),
)
