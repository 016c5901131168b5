"""Which part of the pipeline failed, over a run: the claim-level diagnosis of each sample
(--answer-correctness-diagnose; localeval.metrics.parts.diagnosis) added up.

Every statement of the answers and of the references has one label saying what happened
to it. The errors are the labels with a fault: a reference statement the answer misses
because no chunk held it is the retriever's; one it misses although a chunk held it, and
every answer statement the reference does not support, are the generator's. The part with
most errors is named, with the cause and remedies of its commonest errors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from localeval.metrics.parts.diagnosis import CLAIM_KINDS, GENERATOR, RETRIEVER

#: the metric whose details hold the diagnosis
DIAGNOSED = "answer_correctness"
#: a part is named as failing too when it has at least this share of the errors
SHARE_NAMED = 0.4
_REFERENCE_KINDS = ("stated", "not_retrieved", "not_used")
_ANSWER_KINDS = (
    "correct_from_context",
    "self_knowledge",
    "hallucinated",
    "relevant_noise",
    "irrelevant_noise",
)


@dataclass(frozen=True)
class RunDiagnosis:
    """The statements of a run's answers and references, counted by what happened to them."""

    counts: Mapping[str, int]
    #: samples diagnosed, and samples that could not be (no contexts, undefined)
    n_samples: int
    n_skipped: int

    def errors(self) -> dict[str, int]:
        """The error kinds that occurred, commonest first."""
        found = {k: n for k, n in self.counts.items() if n and CLAIM_KINDS[k].fault}
        return dict(sorted(found.items(), key=lambda item: -item[1]))

    def by_part(self) -> dict[str, int]:
        parts = {RETRIEVER: 0, GENERATOR: 0}
        for kind, n in self.errors().items():
            parts[CLAIM_KINDS[kind].fault] += n
        return parts

    def failed(self) -> list[str]:
        """The parts named as failing: the one with most errors, and the other too when it
        has at least SHARE_NAMED of them."""
        parts = self.by_part()
        total = sum(parts.values())
        if not total:
            return []
        return [
            p for p, n in sorted(parts.items(), key=lambda i: -i[1]) if n / total >= SHARE_NAMED
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "samples": self.n_samples,
            "not_diagnosed": self.n_skipped,
            "counts": dict(self.counts),
            "errors_by_part": self.by_part(),
            "failed": self.failed(),
        }


def run_diagnosis(details: Iterable[Mapping[str, Any]]) -> RunDiagnosis | None:
    """The diagnosis over samples' details ({metric: details}); None when no sample has
    one (the run did not ask for it)."""
    counts: Counter[str] = Counter()
    diagnosed = skipped = 0
    for sample in details:
        found = sample.get(DIAGNOSED, {}).get("diagnosis") if isinstance(sample, Mapping) else None
        if not isinstance(found, Mapping):
            continue
        kinds = found.get("counts")
        if not isinstance(kinds, Mapping):
            skipped += 1  # diagnosed, but nothing to tell the parts apart by
            continue
        diagnosed += 1
        for kind, n in kinds.items():
            if kind in CLAIM_KINDS and isinstance(n, int) and not isinstance(n, bool):
                counts[kind] += n
    if not diagnosed and not skipped:
        return None
    return RunDiagnosis({k: counts.get(k, 0) for k in CLAIM_KINDS}, diagnosed, skipped)


def diagnosis_lines(found: RunDiagnosis) -> list[str]:
    """The diagnosis in sentences: what the statements came to, which part failed, why, and
    what to try."""
    c = found.counts
    if not found.n_samples:
        return [f"No sample could be diagnosed ({found.n_skipped} without retrieved contexts)."]
    references = sum(c[k] for k in _REFERENCE_KINDS)
    answers = sum(c[k] for k in _ANSWER_KINDS)
    missed = c["not_retrieved"] + c["not_used"]
    wrong = c["hallucinated"] + c["relevant_noise"] + c["irrelevant_noise"]
    lines = [
        f"Of {references} reference statements in {found.n_samples} samples, the answers miss "
        f"{missed}: {c['not_retrieved']} never retrieved (the retriever's), {c['not_used']} "
        "retrieved but left out (the generator's).",
        f"Of {answers} answer statements, {wrong} are not in the references: "
        f"{c['hallucinated']} in no retrieved chunk (hallucinated), {c['relevant_noise']} "
        f"taken from relevant chunks, {c['irrelevant_noise']} from irrelevant ones"
        + (
            f"; {c['self_knowledge']} right ones come from no chunk."
            if c["self_knowledge"]
            else "."
        ),
    ]
    failed = found.failed()
    if not failed:
        return [*lines, "No part failed: every statement checked is right and stated."]
    parts = found.by_part()
    total = sum(parts.values())
    named = " and the ".join(failed)
    lines.append(
        f"Failing: the {named} ("
        + ", ".join(f"{parts[p]} of {total} errors" for p in failed)
        + ")."
    )
    for kind, n in list(found.errors().items())[:2]:
        described = CLAIM_KINDS[kind]
        lines.append(
            f"- {n} {described.label}: {described.cause}. Try: {'; '.join(described.remedies)}."
        )
    if found.n_skipped:
        lines.append(f"({found.n_skipped} samples without retrieved contexts were not diagnosed.)")
    return lines
