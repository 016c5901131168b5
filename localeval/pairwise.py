"""Pairwise A/B judging: which of two answers to the same question is better.

LLM judges prefer whichever answer they are shown first (or second): position bias. So
the direct comparison is asked in both orders, and a row whose verdict changes with the
order is a tie. Swapping answer_a and answer_b in the data can therefore never change
which answer wins, only mirror the verdict.

Each order's verdict weighs, for B against A:
* the direct comparison: P(B is better) read from the judge's A/B reply distribution;
* per-answer evidence asked of each answer alone, so it cannot depend on the order:
  faithfulness to the contexts (localeval.metrics.faithfulness; rows with contexts only)
  and P(the answer fully answers the question).
See `margin` for how they are weighed and README.md for the measurements behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from localeval.dataset import ALIASES, CANONICAL, Sample, load_samples
from localeval.errors import DatasetError, UsageError
from localeval.judge import Judge
from localeval.metrics.base import Tools, require_judge
from localeval.metrics.faithfulness import Faithfulness
from localeval.prompts import pairwise as prompts
from localeval.stats import bootstrap_ci

Winner = Literal["A", "B", "tie"]

#: weight of the direct comparison in an order's margin; the rest goes to the per-answer
#: evidence (see README.md, "Comparing two answers", for the measurements)
DIRECT_WEIGHT = 0.5


@dataclass(frozen=True)
class AnswerEvidence:
    """What the judge found about one answer on its own (the same in either order)."""

    faithfulness: float | None
    answers_question: float

    def quality(self) -> float:
        """The mean of the evidence available, in [0, 1]."""
        parts = [self.answers_question]
        if self.faithfulness is not None:
            parts.append(self.faithfulness)
        return sum(parts) / len(parts)


@dataclass(frozen=True)
class OrderReading:
    """The direct comparison in one order, and that order's verdict."""

    shown_first: Literal["A", "B"]
    #: probability that the data's answer B is the better one, whatever label it had
    p_b_better: float
    margin: float
    winner: Literal["A", "B"]


@dataclass(frozen=True)
class PairVerdict:
    """The judge's verdict on one pair of answers."""

    winner: Winner
    #: how sure: the smaller of the two orders' |margin| when they agree, else 0; in [0, 1]
    confidence: float
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
    evidence = evidence_b.quality() - evidence_a.quality()
    return DIRECT_WEIGHT * direct + (1.0 - DIRECT_WEIGHT) * evidence


def _evidence(
    judge: Judge,
    tools: Tools,
    question: str,
    contexts: Sequence[str] | None,
    reference: str | None,
    answer: str,
) -> AnswerEvidence:
    faithfulness = None
    if contexts and any(chunk.strip() for chunk in contexts):
        result = Faithfulness().score(Sample("pair", question, list(contexts), answer), tools)
        faithfulness = result.score
    answered = judge.yes_probability(
        prompts.answers_question(question, contexts, reference, answer)
    )
    return AnswerEvidence(faithfulness, answered)


def _reason(winner: Winner, flipped: bool, a: AnswerEvidence, b: AnswerEvidence) -> str:
    if flipped:
        return "the verdict changed when the answers were shown in the other order"
    if winner == "tie":
        return "the judge found the answers equally good"
    better, worse = (b, a) if winner == "B" else (a, b)
    why = []
    if (
        better.faithfulness is not None
        and worse.faithfulness is not None
        and better.faithfulness > worse.faithfulness
    ):
        why.append(
            f"better supported by the contexts ({better.faithfulness:.2f} vs "
            f"{worse.faithfulness:.2f})"
        )
    if better.answers_question > worse.answers_question:
        why.append(
            f"more fully answers the question ({better.answers_question:.2f} vs "
            f"{worse.answers_question:.2f})"
        )
    if not why:
        why.append("preferred in the direct comparison")
    return f"{winner} is {' and '.join(why)}; both orders agree"


def compare_pair(
    question: str,
    contexts: Sequence[str] | None,
    reference: str | None,
    answer_a: str,
    answer_b: str,
    tools: Tools,
) -> PairVerdict:
    """Judge which answer is better, asking the direct question in both orders."""
    judge = require_judge(tools)
    evidence_a = _evidence(judge, tools, question, contexts, reference, answer_a)
    evidence_b = _evidence(judge, tools, question, contexts, reference, answer_b)
    options = list(prompts.LABELS)
    # A shown first: P(B) is the probability of the second label
    ab = judge.choice_probabilities(
        prompts.which_is_better(question, contexts, reference, answer_a, answer_b), options
    )[1]
    # B shown first: B carries the first label
    ba = judge.choice_probabilities(
        prompts.which_is_better(question, contexts, reference, answer_b, answer_a), options
    )[0]
    readings = []
    for shown_first, p_b in (("A", ab), ("B", ba)):
        lead = margin(p_b, evidence_a, evidence_b)
        readings.append(OrderReading(shown_first, p_b, lead, "B" if lead > 0 else "A"))  # type: ignore[arg-type]
    first, second = readings
    flipped = first.winner != second.winner
    winner: Winner = "tie" if flipped else first.winner
    confidence = 0.0 if flipped else min(abs(first.margin), abs(second.margin))
    p_b = (ab + ba) / 2.0
    w = DIRECT_WEIGHT
    return PairVerdict(
        winner=winner,
        confidence=round(confidence, 4),
        score_a=round(w * (1.0 - p_b) + (1.0 - w) * evidence_a.quality(), 4),
        score_b=round(w * p_b + (1.0 - w) * evidence_b.quality(), 4),
        reason=_reason(winner, flipped, evidence_a, evidence_b),
        flipped=flipped,
        orders=(first, second),
        evidence_a=evidence_a,
        evidence_b=evidence_b,
    )


# -- data ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairRow:
    """One row to compare: a question, optional contexts and reference, two answers."""

    sample_id: str
    question: str
    contexts: list[str] | None
    reference: str | None
    answer_a: str
    answer_b: str
    #: +1 B is better, -1 A is better, 0 equal; None when the data carries no label
    label: int | None = None
    line: int = 0


def load_pairs(path: Path, a_field: str = "answer_a", b_field: str = "answer_b") -> list[PairRow]:
    """Read and check every row; a DatasetError names the file, line and field."""
    rows = []
    for sample in load_samples(path):
        answers = [_answer(path, sample, name) for name in (a_field, b_field)]
        rows.append(
            PairRow(
                sample.sample_id,
                sample.question,
                sample.contexts,
                sample.reference_answer,
                answers[0],
                answers[1],
                _label(path, sample),
                sample.line,
            )
        )
    if not rows:
        raise DatasetError(str(path), "has no rows")
    return rows


def _answer(path: Path, sample: Sample, name: str) -> str:
    canonical = ALIASES.get(name, name)
    if canonical in CANONICAL and canonical != "answer":
        raise UsageError(f"'{name}' is the sample's {canonical}, not an answer to compare")
    value = sample.answer if canonical == "answer" else sample.extra.get(name)
    if value is None:
        raise DatasetError(str(path), "missing", sample.line, name)
    if not isinstance(value, str):
        raise DatasetError(str(path), "must be a string", sample.line, name)
    if not value.strip():
        raise DatasetError(str(path), "is empty", sample.line, name)
    return value


def _label(path: Path, sample: Sample) -> int | None:
    value = sample.extra.get("label")
    if value is None:
        return None
    if isinstance(value, bool) or value not in (-1, 0, 1):
        raise DatasetError(
            str(path), "must be +1 (B better), -1 (A better) or 0 (equal)", sample.line, "label"
        )
    return int(value)


# -- summary ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairwiseSummary:
    """B's record against A over all rows."""

    n: int
    wins_a: int
    wins_b: int
    ties: int
    flipped: int
    #: (wins of B + half the ties) / n
    win_rate_b: float
    ci95: tuple[float, float] | None
    #: rows with a label, and how many verdicts match it (a tie matches only a 0 label)
    labelled: int = 0
    agreed: int = 0
    #: rows that could not be judged (too long for the judge's context), left out of the rest
    n_undefined: int = 0

    def b_worse(self) -> bool:
        """B is worse than A beyond noise: the whole 95% interval lies below 0.5."""
        return self.ci95 is not None and self.ci95[1] < 0.5

    def agreement(self) -> float | None:
        return self.agreed / self.labelled if self.labelled else None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ci95"] = list(self.ci95) if self.ci95 is not None else None
        data["agreement"] = self.agreement()
        data["b_worse"] = self.b_worse()
        return data


def verdict_label(winner: Winner) -> int:
    return {"A": -1, "B": 1, "tie": 0}[winner]


def summarize_verdicts(
    rows: Sequence[PairRow], verdicts: Sequence[PairVerdict], n_undefined: int = 0
) -> PairwiseSummary:
    """B's record over the judged rows (`rows` and `verdicts` in the same order)."""
    points = [{"A": 0.0, "B": 1.0, "tie": 0.5}[v.winner] for v in verdicts]
    labelled = [(r, v) for r, v in zip(rows, verdicts, strict=True) if r.label is not None]
    return PairwiseSummary(
        n=len(verdicts),
        wins_a=sum(v.winner == "A" for v in verdicts),
        wins_b=sum(v.winner == "B" for v in verdicts),
        ties=sum(v.winner == "tie" for v in verdicts),
        flipped=sum(v.flipped for v in verdicts),
        win_rate_b=sum(points) / len(points) if points else 0.0,
        ci95=bootstrap_ci(points),
        labelled=len(labelled),
        agreed=sum(verdict_label(v.winner) == r.label for r, v in labelled),
        n_undefined=n_undefined,
    )
