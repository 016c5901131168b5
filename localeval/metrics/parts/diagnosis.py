"""The claim-level diagnosis (`--answer-correctness-diagnose`): which part of the pipeline
made a sample's answer wrong or incomplete, the retriever or the generator.

RAGChecker's figures, read from verdicts the judge gives on each statement:
  * each answer statement a_i against the reference (correct or not: answer correctness'
    precision verdicts) and against each retrieved chunk c_k;
  * each reference statement r_j against the answer (stated or missing: its recall
    verdicts) and against each chunk c_k.
A verdict counts as yes at the judge's threshold for a "supported" verdict. A chunk is
*relevant* when it states at least one reference statement. Then, per sample:

  retriever.claim_recall         share of r_j that some chunk states
  retriever.context_precision    share of chunks that are relevant
  generator.context_utilization  of the r_j some chunk states, the share the answer states
                                 (undefined when no chunk states any)
  generator.noise_sensitivity_relevant    share of a_i that are incorrect and stated by a
                                          relevant chunk
  generator.noise_sensitivity_irrelevant  share of a_i that are incorrect and stated only
                                          by irrelevant chunks
  generator.hallucination        share of a_i that are incorrect and in no chunk
  generator.self_knowledge       share of a_i that are correct and in no chunk
  generator.faithfulness         share of a_i that some chunk states

Each statement also gets one label saying what happened to it (CLAIM_KINDS), and the
labels are counted: a run's report adds the counts over its samples to say which part
failed (localeval.results.diagnosis). Cost: one judge call per statement and chunk, each
chunk read once for all the statements asked about it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localeval.data.samples import Sample
from localeval.metrics.base import Tools, require_judge
from localeval.metrics.parts.long_context import NoRoomForContext
from localeval.metrics.parts.statements import statement_support, support_threshold

RETRIEVER, GENERATOR = "retriever", "generator"

#: the sub-scores, in the order reports list them
FIGURES = (
    "retriever.claim_recall",
    "retriever.context_precision",
    "generator.context_utilization",
    "generator.noise_sensitivity_relevant",
    "generator.noise_sensitivity_irrelevant",
    "generator.hallucination",
    "generator.self_knowledge",
    "generator.faithfulness",
)
#: figures where lower is better (the others: higher is better)
LOWER_IS_BETTER = frozenset(
    {
        "generator.noise_sensitivity_relevant",
        "generator.noise_sensitivity_irrelevant",
        "generator.hallucination",
    }
)


@dataclass(frozen=True)
class ClaimKind:
    """What happened to a statement, whose fault it is when it is an error, and what to do."""

    label: str
    #: "retriever", "generator", or "" when it is no error
    fault: str = ""
    cause: str = ""
    remedies: tuple[str, ...] = ()


#: every label a statement can get, by key
CLAIM_KINDS: dict[str, ClaimKind] = {
    # the reference's statements
    "stated": ClaimKind("stated in the answer"),
    "not_retrieved": ClaimKind(
        "missing: no retrieved chunk states it",
        RETRIEVER,
        "retrieval misses facts the reference holds",
        ("a better embedding model", "hybrid BM25 + reranker retrieval", "query rewriting"),
    ),
    "not_used": ClaimKind(
        "missing: retrieved, but the answer leaves it out",
        GENERATOR,
        "the generator leaves out facts it was given",
        (
            "ask for complete answers that use every relevant passage",
            "fewer, more relevant chunks, the best first",
        ),
    ),
    # the answer's statements
    "correct_from_context": ClaimKind("correct, stated by a retrieved chunk"),
    "self_knowledge": ClaimKind(
        "correct, but in no retrieved chunk (the generator's own knowledge)"
    ),
    "hallucinated": ClaimKind(
        "incorrect, in no retrieved chunk (hallucinated)",
        GENERATOR,
        "the generator invents beyond the retrieved context",
        (
            'a stricter system prompt ("answer only from the context, else say you don\'t know")',
            "temperature 0-0.1",
            "require citations of the context",
        ),
    ),
    "relevant_noise": ClaimKind(
        "incorrect, taken from a relevant chunk",
        GENERATOR,
        "the generator misreads passages that hold the answer",
        (
            "ask the generator to quote or cite the passage behind each claim",
            "a stronger generator",
        ),
    ),
    "irrelevant_noise": ClaimKind(
        "incorrect, taken from an irrelevant chunk",
        GENERATOR,
        "the generator repeats retrieved passages that do not answer the question",
        (
            "a reranker or fewer chunks, so that less noise is retrieved",
            "tell the generator to ignore passages that do not answer the question",
        ),
    ),
}


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def figures(
    correct: Sequence[bool],
    stated: Sequence[bool],
    answer_in_chunk: Sequence[Sequence[bool]],
    reference_in_chunk: Sequence[Sequence[bool]],
) -> dict[str, float | None]:
    """RAGChecker's figures from yes/no verdicts: `correct[i]` (answer statement i supported
    by the reference), `stated[j]` (reference statement j stated by the answer),
    `answer_in_chunk[i][k]` and `reference_in_chunk[j][k]` (chunk k states it)."""
    n_chunks = len(answer_in_chunk[0]) if answer_in_chunk else len(reference_in_chunk[0])
    retrieved = [any(row) for row in reference_in_chunk]
    relevant = [any(row[k] for row in reference_in_chunk) for k in range(n_chunks)]
    from_relevant = [
        any(r and c for r, c in zip(relevant, row, strict=True)) for row in answer_in_chunk
    ]
    from_irrelevant = [
        not rel and any(not r and c for r, c in zip(relevant, row, strict=True))
        for rel, row in zip(from_relevant, answer_in_chunk, strict=True)
    ]
    in_no_chunk = [not any(row) for row in answer_in_chunk]
    wrong = [not c for c in correct]
    return {
        "retriever.claim_recall": _share(retrieved),
        "retriever.context_precision": _share(relevant),
        "generator.context_utilization": _share(
            [s for s, r in zip(stated, retrieved, strict=True) if r]
        ),
        "generator.noise_sensitivity_relevant": _share(
            [r and w for r, w in zip(from_relevant, wrong, strict=True)]
        ),
        "generator.noise_sensitivity_irrelevant": _share(
            [r and w for r, w in zip(from_irrelevant, wrong, strict=True)]
        ),
        "generator.hallucination": _share(
            [n and w for n, w in zip(in_no_chunk, wrong, strict=True)]
        ),
        "generator.self_knowledge": _share(
            [n and not w for n, w in zip(in_no_chunk, wrong, strict=True)]
        ),
        "generator.faithfulness": _share([not n for n in in_no_chunk]),
    }


def claim_kinds(
    correct: Sequence[bool],
    stated: Sequence[bool],
    answer_in_chunk: Sequence[Sequence[bool]],
    reference_in_chunk: Sequence[Sequence[bool]],
) -> tuple[list[str], list[str]]:
    """The CLAIM_KINDS key of each answer statement and of each reference statement."""
    n_chunks = len(answer_in_chunk[0]) if answer_in_chunk else len(reference_in_chunk[0])
    relevant = [any(row[k] for row in reference_in_chunk) for k in range(n_chunks)]
    answer_kinds = []
    for ok, row in zip(correct, answer_in_chunk, strict=True):
        if not any(row):
            answer_kinds.append("self_knowledge" if ok else "hallucinated")
        elif ok:
            answer_kinds.append("correct_from_context")
        elif any(r and c for r, c in zip(relevant, row, strict=True)):
            answer_kinds.append("relevant_noise")
        else:
            answer_kinds.append("irrelevant_noise")
    reference_kinds = [
        "stated" if ok else "not_used" if any(row) else "not_retrieved"
        for ok, row in zip(stated, reference_in_chunk, strict=True)
    ]
    return answer_kinds, reference_kinds


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def diagnose(sample: Sample, tools: Tools, details: dict[str, Any]) -> dict[str, Any]:
    """The diagnosis of one sample from answer correctness' details (its statements and
    verdicts) and one verdict per statement and retrieved chunk."""
    chunks = sample.contexts or []
    if not any(chunk.strip() for chunk in chunks):
        return {"reason": "no contexts were retrieved: nothing to tell the parts apart by"}
    answer_statements = list(details["statements"])
    reference_statements = list(details["reference_statements"])
    asked = answer_statements + reference_statements
    threshold = support_threshold(tools, "answer_correctness")
    judge, ask = require_judge(tools), tools.prompts.rag.text_says
    # each chunk read once for every statement asked about it (they share it as prefix)
    by_chunk: list[list[float]] = []
    for chunk in chunks:
        if not chunk.strip():  # an empty chunk states nothing: no need to ask
            by_chunk.append([0.0] * len(asked))
            continue
        try:
            raw, _ = statement_support(judge, [chunk], asked, ask, sample.question)
        except NoRoomForContext:
            return {"reason": "a statement is too long for the judge's window even alone"}
        by_chunk.append([tools.calibrated("supported", p) for p in raw])
    split = len(answer_statements)
    support = [[by_chunk[k][i] for k in range(len(chunks))] for i in range(split)]
    coverage = [
        [by_chunk[k][split + j] for k in range(len(chunks))]
        for j in range(len(reference_statements))
    ]
    yes = [[[p >= threshold for p in row] for row in table] for table in (support, coverage)]
    correct = [v == "supported" for v in details["verdicts"]]
    stated = [v == "stated" for v in details["reference_verdicts"]]
    answer_kinds, reference_kinds = claim_kinds(correct, stated, yes[0], yes[1])
    return {
        "figures": {k: _round(v) for k, v in figures(correct, stated, yes[0], yes[1]).items()},
        "answer_claims": answer_kinds,
        "reference_claims": reference_kinds,
        "counts": dict(Counter(answer_kinds + reference_kinds)),
        "chunk_support": [[round(p, 4) for p in row] for row in support],
        "chunk_coverage": [[round(p, 4) for p in row] for row in coverage],
    }
