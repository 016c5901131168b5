"""Pairwise A/B judging: which of two answers to the same question is better.

LLM judges prefer whichever answer they are shown first (or second): position bias. So
the direct comparison is asked in both orders, and a row whose verdict changes with the
order is a tie. Swapping answer_a and answer_b in the data can therefore never change
which answer wins, only mirror the verdict.

Each order's margin of B over A weighs two things:
* per-answer evidence, asked of each answer alone so that it cannot depend on the order:
  its faithfulness to the contexts (localeval.metrics.faithfulness) when the row has
  contexts, else the probability that it fully answers the question;
* the direct comparison in that order: P(B is better) read from the judge's A/B reply.
With the small default judge the direct comparison is at chance while faithfulness ranks
the better answer first in nearly every measured pair (docs/measurements/judge-quality.md), so the
evidence carries most of the weight and the direct comparison mostly breaks near-ties. A
larger judge may deserve more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from localeval.data.samples import Sample
from localeval.errors import DatasetError
from localeval.judge import Judge
from localeval.metrics.base import Tools, require_judge
from localeval.metrics.faithfulness import Faithfulness
from localeval.prompts.pairwise import LABELS

Winner = Literal["A", "B", "tie"]

#: weight of the direct comparison in an order's margin; the rest goes to the per-answer
#: evidence (the measured variants: docs/measurements/judge-quality-history.md,
#: "Comparing two answers")
DIRECT_WEIGHT = 0.1


@dataclass(frozen=True)
class AnswerEvidence:
    """What the judge found about one answer on its own (the same in either order)."""

    #: "faithfulness" (rows with contexts) or "answers_question" (rows without)
    measure: Literal["faithfulness", "answers_question"]
    #: in [0, 1], higher is better
    value: float
    #: the measure's evidence (for faithfulness: statements and their support)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OrderReading:
    """The direct comparison in one order, and that order's verdict."""

    shown_first: Literal["A", "B"]
    #: probability that the data's answer B is the better one, whatever label it had
    p_b_better: float
    #: B's lead over A in this order, in [-1, 1]
    margin: float
    winner: Winner


@dataclass(frozen=True)
class PairVerdict:
    """The judge's verdict on one pair of answers."""

    winner: Winner
    #: how sure: the smaller |margin| of the two orders when they agree, else 0; in [0, 1]
    confidence: float
    #: each answer's evidence and direct-comparison share, weighed as the margin is; [0, 1]
    score_a: float
    score_b: float
    reason: str
    #: the two orders gave different winners (the row is then a tie)
    flipped: bool
    orders: tuple[OrderReading, OrderReading]
    evidence_a: AnswerEvidence
    evidence_b: AnswerEvidence

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["orders"] = [asdict(o) for o in self.orders]
        return data


def margin(p_b_better: float, evidence_a: AnswerEvidence, evidence_b: AnswerEvidence) -> float:
    """B's lead over A in one order, in [-1, 1]: positive when B looks better."""
    direct = 2.0 * p_b_better - 1.0
    evidence = evidence_b.value - evidence_a.value
    return DIRECT_WEIGHT * direct + (1.0 - DIRECT_WEIGHT) * evidence


def _side(value: float) -> Winner:
    return "B" if value > 0 else "A" if value < 0 else "tie"


def has_contexts(contexts: Sequence[str] | None) -> bool:
    return bool(contexts) and any(chunk.strip() for chunk in contexts or ())


def answer_evidence(
    tools: Tools,
    question: str,
    contexts: Sequence[str] | None,
    reference: str | None,
    answer: str,
) -> AnswerEvidence:
    """Faithfulness to the contexts when there are any, else P(it answers the question)."""
    if has_contexts(contexts):
        assert contexts is not None
        result = Faithfulness().score(Sample("pair", question, list(contexts), answer), tools)
        if result.score is None:  # no statements: nothing in it is supported
            return AnswerEvidence("faithfulness", 0.0, {"note": result.reason})
        return AnswerEvidence("faithfulness", result.score, result.details)
    judge: Judge = require_judge(tools)
    asked = tools.prompts.pairwise.answers_question(question, None, reference, answer)
    answered = judge.yes_probability(asked)
    return AnswerEvidence("answers_question", answered)


_EVIDENCE_WORDS = {
    "faithfulness": "better supported by the contexts",
    "answers_question": "more likely to fully answer the question",
}


def _reason(winner: Winner, flipped: bool, a: AnswerEvidence, b: AnswerEvidence) -> str:
    if flipped:
        return "the verdict changed when the answers were shown in the other order"
    if winner == "tie":
        return "the judge found nothing to tell the answers apart"
    better, worse = (b, a) if winner == "B" else (a, b)
    if better.value > worse.value:
        why = f"{_EVIDENCE_WORDS[better.measure]} ({better.value:.2f} vs {worse.value:.2f})"
    else:
        why = "preferred in the direct comparison"
    return f"{winner} is {why}; both orders agree"


def compare_pair(
    question: str,
    contexts: Sequence[str] | None,
    reference: str | None,
    answer_a: str,
    answer_b: str,
    tools: Tools,
) -> PairVerdict:
    """Judge which answer is better, asking the direct question in both orders."""
    judge, prompts = require_judge(tools), tools.prompts.pairwise
    evidence_a = answer_evidence(tools, question, contexts, reference, answer_a)
    evidence_b = answer_evidence(tools, question, contexts, reference, answer_b)
    options = list(LABELS)
    # A shown first: P(B) is the probability of the second label
    ab = judge.choice_probabilities(
        prompts.which_is_better(question, contexts, reference, answer_a, answer_b), options
    )[1]
    # B shown first: B carries the first label
    ba = judge.choice_probabilities(
        prompts.which_is_better(question, contexts, reference, answer_b, answer_a), options
    )[0]
    first, second = (
        OrderReading(shown_first, p_b, lead, _side(lead))
        for shown_first, p_b, lead in (
            ("A", ab, margin(ab, evidence_a, evidence_b)),
            ("B", ba, margin(ba, evidence_a, evidence_b)),
        )
    )
    flipped = first.winner != second.winner
    winner: Winner = "tie" if flipped else first.winner
    confidence = 0.0 if flipped else min(abs(first.margin), abs(second.margin))
    p_b = (ab + ba) / 2.0
    w = DIRECT_WEIGHT
    return PairVerdict(
        winner=winner,
        confidence=round(confidence, 4),
        score_a=round(w * (1.0 - p_b) + (1.0 - w) * evidence_a.value, 4),
        score_b=round(w * p_b + (1.0 - w) * evidence_b.value, 4),
        reason=_reason(winner, flipped, evidence_a, evidence_b),
        flipped=flipped,
        orders=(first, second),
        evidence_a=evidence_a,
        evidence_b=evidence_b,
    )


def compare_sample(sample: Sample, tools: Tools) -> float:
    """The verdict on a pairwise sample (answer_a, answer_b in `extra`) as a number:
    1.0 B wins, 0.0 A wins, 0.5 tie; the form localeval.calibration.agreement's `compare` takes."""
    answers = []
    for name in ("answer_a", "answer_b"):
        value = sample.extra.get(name)
        if not isinstance(value, str) or not value.strip():
            raise DatasetError(f"sample {sample.sample_id}", "missing or empty", sample.line, name)
        answers.append(value)
    verdict = compare_pair(
        sample.question, sample.contexts, sample.reference_answer, *answers, tools=tools
    )
    return {"A": 0.0, "B": 1.0, "tie": 0.5}[verdict.winner]
