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
Measured with the default 0.5B judge (README.md, "Comparing two answers"), the direct
comparison is at chance level while faithfulness ranks the better answer first on 29 of
30 WikiEval and 11 of 12 HaluEval pairs, so the evidence carries most of the weight and
the direct comparison mostly breaks near-ties. A larger judge may deserve more.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from localeval.data.samples import ALIASES, CANONICAL, Sample, load_samples
from localeval.engine.runner import new_run_id
from localeval.errors import DatasetError, UsageError
from localeval.judge import Judge, Usage
from localeval.metrics.base import Tools, require_judge
from localeval.metrics.faithfulness import Faithfulness
from localeval.prompts import PROMPT_VERSION
from localeval.prompts import pairwise as prompts
from localeval.stats import bootstrap_ci

Winner = Literal["A", "B", "tie"]

#: weight of the direct comparison in an order's margin; the rest goes to the per-answer
#: evidence (measurements in README.md, "Comparing two answers")
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
    answered = judge.yes_probability(prompts.answers_question(question, None, reference, answer))
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
    judge = require_judge(tools)
    evidence_a = answer_evidence(tools, question, contexts, reference, answer_a)
    evidence_b = answer_evidence(tools, question, contexts, reference, answer_b)
    options = list(prompts.LABELS)
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


def verdicts_to_dict(
    dataset: str,
    tools: Tools,
    rows: Sequence[PairRow],
    verdicts: Sequence[PairVerdict | None],
    summary: PairwiseSummary,
    usage: Usage,
) -> dict[str, Any]:
    """The compare-answers results file: run, summary, and every row's verdict."""
    assert tools.judge is not None
    entries = []
    for row, verdict in zip(rows, verdicts, strict=True):
        entry: dict[str, Any] = {"sample_id": row.sample_id, "label": row.label}
        if verdict is None:
            entry["undefined_reason"] = "too long for the judge's context"
        else:
            entry.update(verdict.as_dict())
            if row.label is not None:
                entry["agrees_with_label"] = verdict_label(verdict.winner) == row.label
        entries.append(entry)
    return {
        "run": {
            "id": new_run_id(),
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "dataset": dataset,
            "judge": tools.judge.identity.record(with_settings=False),
            "prompt_version": PROMPT_VERSION,
            "direct_weight": DIRECT_WEIGHT,
            "usage": usage.as_dict(),
        },
        "summary": summary.as_dict(),
        "rows": entries,
    }
