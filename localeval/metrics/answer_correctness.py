"""Answer correctness: is the answer right, judged against the reference answer claim by
claim in both directions.

Inputs: question, answer, reference_answer (contexts too, for the diagnosis).
Output: the F1 (F-beta with `--answer-correctness-beta`) of
  precision: how much of the answer the reference supports: the judge's probability that
    the reference says each of the answer's statements, averaged over the statements
    weighted by their length in words (CJK: characters), and
  recall: how much of the reference the answer states: the same for each of the
    reference's statements against the answer;
in [0, 1], higher is better; 0 when both are 0.
The statements are each text's sentences, as faithfulness splits the answer, each asked in
its own yes/no question after the other text (the prompt set's `text_says`: "Does the
context above say that ...?", the other text as the context), with the judge's calibration
map for "supported" verdicts, the cache and the shared prompt prefix. Weighted by length,
a long sentence the reference contradicts counts for more than a short aside (measured:
docs/measurements/judge-quality.md).
Details: precision, recall, beta; the answer's statements with their verdicts
("supported" / "unsupported" by the reference) and probabilities (`support`); the
reference's statements (`reference_statements`) with theirs (`reference_verdicts`:
"stated" / "missing", `coverage`). With `--answer-correctness-diagnose`, also the
claim-level diagnosis (localeval.metrics.parts.diagnosis) under `diagnosis`, and its
figures as sub-scores.
Undefined without an answer or a reference answer, or when either has no statements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from localeval.data.samples import Sample
from localeval.errors import UsageError, param
from localeval.metrics.base import (
    Details,
    Evidence,
    EvidenceTable,
    MetricBase,
    MetricOption,
    MetricResult,
    MetricSpec,
    Note,
    Tools,
    missing_field,
)
from localeval.metrics.parts.claims import statement_weights
from localeval.metrics.parts.diagnosis import FIGURES, diagnose
from localeval.metrics.parts.explain import (
    StatementWords,
    first_with,
    number,
    statement_changes,
    weakest,
)
from localeval.metrics.parts.statements import (
    StatementEvidence,
    asked_of_answer,
    configure_statements,
    judge_statements,
    statements_option,
)
from localeval.prompts.sets import SENTENCES, StatementMode
from localeval.text import detect_language

NAME = "answer_correctness"
#: precision and recall weigh the same unless asked otherwise (Ragas and RAGChecker use F1)
DEFAULT_BETA = 1.0

#: the answer's statements, each checked against the reference answer
CORRECT = StatementEvidence(
    metric=NAME,
    text_name="the answer",
    probabilities="support",
    positive="supported",
    negative="unsupported",
    no_contexts_note="",  # the reference is never empty here (missing_field)
)
#: the reference's statements, each checked against the answer
STATED = StatementEvidence(
    metric=NAME,
    text_name="the reference answer",
    probabilities="coverage",
    positive="stated",
    negative="missing",
    no_contexts_note="",
)
#: the recall side's details keys that would clash with the precision side's
_REFERENCE_KEYS = {
    "statements": "reference_statements",
    "verdicts": "reference_verdicts",
    "long_context": "reference_long_context",
    "not_judged": "reference_not_judged",
    "verdict_share": "reference_verdict_share",
    "sentences": "reference_sentences",
    "claim_sentence": "reference_claim_sentence",
    "claims_fallback": "reference_claims_fallback",
    "focused_evidence": "reference_focused_evidence",
    "evidence_sentences": "reference_evidence_sentences",
    "hard_facts": "reference_hard_facts",
}


def f_beta(precision: float, recall: float, beta: float = DEFAULT_BETA) -> float:
    """The weighted harmonic mean of precision and recall (recall counts beta times as
    much); 0 when both are 0."""
    weight = beta * beta
    denominator = weight * precision + recall
    return (1 + weight) * precision * recall / denominator if denominator > 0 else 0.0


def by_length(values: Sequence[float], details: Details) -> float:
    """The mean of the statements' values weighted by each statement's words (a CJK
    character is a word; a claim: its share of its sentence's): the share of the text,
    rather than of its sentences."""
    weights = statement_weights(details["statements"], details)
    return sum(v * w for v, w in zip(values, weights, strict=True)) / sum(weights)


BETA_FLAG = "--answer-correctness-beta"
DIAGNOSE_FLAG = "--answer-correctness-diagnose"
STATEMENTS_FLAG = "--answer-correctness-statements"
#: their names (dests): what `options=` of the API takes, and messages name
BETA, DIAGNOSE, STATEMENTS = (
    "answer_correctness_beta",
    "answer_correctness_diagnose",
    "answer_correctness_statements",
)
#: --answer-correctness-statements: which side's statements are the judge's claims (the
#: rest: sentences)
UNITS = {
    "sentences": (False, False),
    "claims": (True, True),
    "reference-claims": (False, True),
}


class AnswerCorrectness(MetricBase):
    name = NAME
    needs = ("question", "answer", "reference_answer")
    uses_judge = True
    uses_embedder = False

    def __init__(
        self, beta: float = DEFAULT_BETA, diagnose: bool = False, statements: str | None = None
    ):
        self.beta = beta
        #: also judge each statement against each retrieved chunk (RAGChecker's figures)
        self.diagnose = diagnose
        #: which side's statements are the judge's claims; None: the prompt set's choice
        self.statements = statements

    def settings(self) -> dict[str, Any]:
        # the statements' units are recorded only when given: the prompt set's choice
        # otherwise, which its version records
        given = {} if self.statements is None else {"statements": self.statements}
        return {"beta": self.beta, "diagnose": self.diagnose, **given}

    def modes(self, tools: Tools, language: str) -> tuple[StatementMode, StatementMode]:
        """How the answer's and the reference's statements are made: the prompt set's
        choice for the language, the units as --answer-correctness-statements says when given."""
        rag = tools.prompts.rag
        answer = rag.statement_mode(NAME, language)
        reference = rag.statement_mode(f"{NAME}.reference", language)
        if self.statements is None:
            return answer, reference
        claims = UNITS[self.statements]
        return replace(answer, claims=claims[0]), replace(reference, claims=claims[1])

    def fields_read(self, sample: Sample) -> tuple[str, ...]:
        # the diagnosis asks each statement against each retrieved chunk
        return (*self.needs, "contexts") if self.diagnose else self.needs

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.answer is not None and sample.reference_answer is not None
        ask = tools.prompts.rag.text_says
        answer_mode, reference_mode = self.modes(tools, detect_language(sample.reference_answer))
        # 1. precision: each statement of the answer, asked against the reference
        correct = judge_statements(
            sample.answer,
            [sample.reference_answer],
            tools,
            CORRECT,
            sample.question,
            ask,
            answer_mode,
        )
        if correct.score is None:
            return correct
        # 2. recall: each statement of the reference, asked against the answer
        stated = judge_statements(
            sample.reference_answer,
            [sample.answer],
            tools,
            STATED,
            sample.question,
            asked_of_answer(ask),
            reference_mode,
        )
        if stated.score is None:
            return stated
        # 3. each side's verdicts weighted by their statements' length, and the two combined
        precision = by_length(correct.details["support"], correct.details)
        recall = by_length(stated.details["coverage"], stated.details)
        details: dict[str, Any] = {
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "beta": self.beta,
            **correct.details,
        }
        if answer_mode != SENTENCES or reference_mode != SENTENCES:  # not whole sentences
            details["statement_modes"] = {
                "answer": answer_mode.name,
                "reference": reference_mode.name,
            }
        for key, value in stated.details.items():
            if key != "verdict_threshold":  # the same as the precision side's
                details[_REFERENCE_KEYS.get(key, key)] = value
        # 4. on request, the same statements against each retrieved chunk
        if self.diagnose:
            details["diagnosis"] = diagnose(sample, tools, details)
        return MetricResult(f_beta(precision, recall, self.beta), details)


def sub_scores(details: Details) -> dict[str, float | None]:
    """Precision and recall, and the diagnosis figures where the sample was diagnosed; {}
    for an undefined result. Read from the details alone (a stored run gives them too)."""
    if "precision" not in details:
        return {}
    found = {f"{NAME}.precision": number(details.get("precision"))}
    found[f"{NAME}.recall"] = number(details.get("recall"))
    diagnosed = details.get("diagnosis")
    if isinstance(diagnosed, Mapping):
        figures = diagnosed.get("figures")
        for name in FIGURES:
            found[name] = number(figures.get(name)) if isinstance(figures, Mapping) else None
    return found


def configure(values: Mapping[str, Any], requested: bool) -> dict[str, Any]:
    """--answer-correctness-beta B, --answer-correctness-diagnose and
    --answer-correctness-statements."""
    found: dict[str, Any] = {}
    given = values.get(BETA)
    if given is not None:
        try:
            beta = float(given)
        except ValueError:
            beta = -1.0
        if not 0 < beta <= 10:
            raise UsageError(
                f"{param(BETA)} must be a number above 0 and at most 10, got {given!r}"
            )
        found["beta"] = beta
    if values.get(DIAGNOSE):
        found["diagnose"] = True
    found.update(configure_statements(values.get(STATEMENTS), True, STATEMENTS, NAME, UNITS))
    if found and not requested:
        options = ((BETA, "beta"), (DIAGNOSE, "diagnose"), (STATEMENTS, "statements"))
        given = [param(option) for option, key in options if key in found]
        verb = "set" if len(given) > 1 else "sets"
        raise UsageError(
            f"{' and '.join(given)} {verb} answer_correctness; add -m answer_correctness"
        )
    return found


_answer_changes = statement_changes(
    "statements",
    "support",
    StatementWords(
        noun="answer statement",
        yes="supported by the reference",
        no="unsupported by the reference",
        lost="lost the reference's support",
        gained="now supported by the reference",
        gone="no longer in the answer",
    ),
)
_reference_changes = statement_changes(
    "reference_statements",
    "coverage",
    StatementWords(
        noun="reference statement",
        yes="stated by the answer",
        no="missing from the answer",
        lost="no longer stated by the answer",
        gained="now stated by the answer",
        gone="no longer in the reference",
    ),
)


def explain(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
    """Which statements flipped, on both sides: the answer's (right or wrong) and the
    reference's (stated or missing)."""
    return _answer_changes(base, new) + _reference_changes(base, new)


def hint(details: Details) -> Evidence | None:
    """The first answer statement the reference does not support, else the first reference
    statement the answer leaves out, else the least supported answer statement."""
    if (statement := first_with(details, "unsupported")) is not None:
        return Evidence("not in the reference", statement)
    missing = first_with(details, "missing", "reference_statements", "reference_verdicts")
    if missing is not None:
        return Evidence("the answer leaves out", missing)
    return weakest(details, "support", "least supported")


def notes(details: Details) -> list[Note]:
    precision, recall = number(details.get("precision")), number(details.get("recall"))
    if precision is None or recall is None:
        return []
    text = (
        f"Precision {precision:.2f}: how much of the answer the reference supports. "
        f"Recall {recall:.2f}: how much of the reference the answer states."
    )
    return [Note(text, low=min(precision, recall) < 0.5, consumes=("precision", "recall", "beta"))]


SPEC = MetricSpec(
    AnswerCorrectness,
    help="answer vs reference_answer, claim by claim (judge); --answer-correctness-diagnose "
    "for RAGChecker's retriever and generator figures",
    order=35,
    gate=0.70,
    cause="the answers state wrong facts or leave out facts the reference holds",
    remedies=(
        "check context recall first: a fact never retrieved cannot be stated",
        "a stricter system prompt (answer only from the context)",
        "ask for complete answers that use every relevant passage",
        "a stronger generator model",
    ),
    explain=explain,
    hint=hint,
    table=EvidenceTable("answer statement", "statements", "support", "unsupported", "answer"),
    extra_tables=(
        EvidenceTable(
            "reference statement",
            "reference_statements",
            "coverage",
            "missing",
            verdicts="reference_verdicts",
        ),
    ),
    notes=notes,
    sub_scores=sub_scores,
    options=(
        MetricOption(
            BETA_FLAG,
            BETA,
            "answer_correctness: weigh recall BETA times as much as precision (F-beta; "
            "default 1, the F1).",
            metavar="BETA",
            old_flag="--ac-beta",
            old_dest="beta",
        ),
        MetricOption(
            DIAGNOSE_FLAG,
            DIAGNOSE,
            "answer_correctness: also judge each answer and reference statement against each "
            "retrieved chunk, and say whether the retriever or the generator failed "
            "(RAGChecker's figures; one judge call per statement and chunk).",
            is_flag=True,
            old_flag="--diagnose",
            old_dest="diagnose",
        ),
        statements_option(
            STATEMENTS_FLAG,
            STATEMENTS,
            NAME,
            UNITS,
            old=("--ac-statements", "ac_statements"),
        ),
    ),
    configure=configure,
    verdicts="support",
    verdict_kind="supported",
)
