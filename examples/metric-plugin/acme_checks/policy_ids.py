"""policy_ids: every policy number the answer cites (POL-1234) is one the retrieved
contexts hold. A policy number the documents do not hold is one the generator made up:
for an insurer's assistant, the worst kind of unfaithful answer.

A domain check: no model, plain Python. The score is the share of the answer's policy
numbers found in the contexts; an answer that cites none is undefined (nothing to check),
and the run says so with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from localeval.data.samples import Sample
from localeval.metrics.base import Evidence, MetricResult, MetricSpec, Tools, missing_field

POLICY = re.compile(r"\bPOL-\d{4,}\b")


class PolicyIds:
    name = "policy_ids"
    needs = ("answer", "contexts")
    uses_judge = False
    uses_embedder = False

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        cited = list(dict.fromkeys(POLICY.findall(sample.answer or "")))
        if not cited:
            return MetricResult.undefined("the answer cites no policy number")
        held = set(POLICY.findall(" ".join(sample.contexts or [])))
        unknown = [number for number in cited if number not in held]
        # the evidence: plain JSON values, shown by reports and compared by `diff`
        return MetricResult(1 - len(unknown) / len(cited), {"cited": cited, "unknown": unknown})


def first_unknown(details: Mapping[str, Any]) -> Evidence | None:
    """Why a sample scored low, for reports and the failure message of a gate."""
    unknown = details.get("unknown") or []
    if not unknown:
        return None
    return Evidence("cites a policy number the contexts do not hold", unknown[0])


SPEC = MetricSpec(
    PolicyIds,
    help="policy numbers (POL-1234) in the answer that the contexts hold",
    gate=0.95,
    cause="answers cite policy numbers that the retrieved documents do not hold",
    remedies=(
        "tell the generator to cite only policy numbers that appear in the context",
        "retrieve the policy documents the questions are about",
    ),
    hint=first_unknown,
)
