"""Answer relevancy: whether the answer addresses the question that was asked.

Inputs: question, answer.
Output: the judge's probability that the answer answers the question (one yes/no question
after the answer); 0 when the judge finds the answer noncommittal (probability of
"noncommittal" >= 0.5). In [0, 1].
Evidence, on request (`--answer-relevancy-questions N`, default 0): the judge also writes
N questions that the answer would answer, in the question's language, and their cosine similarity to
the question asked is kept in details (question_similarity). It is not the score
(Ragas' definition): a vague answer restates the question while a full one answers its
parts, so that similarity ranks poor answers above good ones more often than the direct
question does; and writing them costs more than all the verdicts of a sample, so it is
asked for, not done by default (docs/decisions.md).
Details: answers_probability (the judge's calibrated verdict; answers_probability_raw its
raw P(Yes) when it is calibrated), the noncommittal probability, language; with
--answer-relevancy-questions the generated questions, their similarities and mean.
Undefined without an answer. An answer too long for the judge's window is judged on its
beginning, as much as fits (localeval.metrics.parts.long_context), said in details.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localeval.data.samples import Sample
from localeval.embedder import cosine
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
    require_embedder,
    require_judge,
)
from localeval.metrics.parts.explain import number, pairs, quote, text
from localeval.metrics.parts.long_context import NoRoomForContext, fit_text
from localeval.schema import Array, Object, Str, max_bytes
from localeval.text import detect_language

QUESTION_CHARS = 200
#: the generated questions are evidence only: none unless asked for
DEFAULT_QUESTIONS = 0
MAX_QUESTIONS = 10
QUESTIONS_FLAG = "--answer-relevancy-questions"
QUESTIONS = "answer_relevancy_questions"


class AnswerRelevancy(MetricBase):
    name = "answer_relevancy"
    needs = ("question", "answer")
    uses_judge = True

    def __init__(self, n_questions: int = DEFAULT_QUESTIONS):
        self.n_questions = n_questions
        self.schema = Object((("questions", Array(Str(QUESTION_CHARS), n_questions, n_questions)),))

    @property
    def uses_embedder(self) -> bool:  # type: ignore[override]
        """Only the generated questions are embedded (read on the class: it may)."""
        return self.n_questions > 0

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.answer is not None
        judge, prompts = require_judge(tools), tools.prompts.rag
        language = detect_language(sample.question)
        # 0. as much of the answer as the prompts hold: all of it, but for a huge answer its
        # beginning that both yes/no prompts hold
        try:
            answer = sample.answer
            for question_for in (prompts.answer_answers, prompts.answer_noncommittal):
                answer = fit_text(
                    judge,
                    answer,
                    lambda text, ask=question_for: ask(sample.question, text, language),
                    reserve=1,
                )
        except NoRoomForContext:
            return MetricResult.undefined("the question is too long for the judge's context window")
        try:
            if self.n_questions:
                answer = fit_text(
                    judge,
                    answer,
                    lambda text: prompts.questions_for_answer(text, self.n_questions, language),
                    reserve=max_bytes(self.schema) + 1,
                )
        except NoRoomForContext:
            return MetricResult.undefined(
                "the judge's context window is too small to write the questions "
                f"(they need up to {max_bytes(self.schema) + 1} tokens; raise n_ctx)"
            )
        # 1. is the answer an answer at all?
        noncommittal = judge.yes_probability(
            prompts.answer_noncommittal(sample.question, answer, language)
        )
        # 2. does it answer the question asked?
        answers = judge.yes_probability(prompts.answer_answers(sample.question, answer, language))
        # 3. the verdict as the probability that a person agrees (the judge's calibration map)
        raw, answers = answers, tools.calibrated("answers", answers)
        score = 0.0 if noncommittal >= 0.5 else answers
        details: dict[str, Any] = {
            "answers_probability": round(answers, 4),
            "noncommittal_probability": round(noncommittal, 4),
            "language": language,
        }
        if self.n_questions:
            details.update(self.questions_asked(sample.question, answer, language, tools))
        if "answers" in tools.calibration:
            details["answers_probability_raw"] = round(raw, 4)
        if answer != sample.answer:
            details["long_context"] = {
                "rule": "answer too long for the judge's window: its beginning judged",
                "answer_chars": len(sample.answer),
                "judged_chars": len(answer),
            }
        return MetricResult(score, details)

    def questions_asked(
        self, question: str, answer: str, language: str, tools: Tools
    ) -> dict[str, Any]:
        """Evidence: the questions this answer would answer, in the question's language, and
        how close they are to the question asked."""
        reply = require_judge(tools).generate(
            tools.prompts.rag.questions_for_answer(answer, self.n_questions, language), self.schema
        )
        questions = [q.strip() for q in reply["questions"]]
        vectors = require_embedder(tools).embed([question, *questions])
        similarities = [max(0.0, cosine(vectors[0], v)) for v in vectors[1:]]
        return {
            "generated_questions": questions,
            "similarities": [round(s, 4) for s in similarities],
            "question_similarity": round(sum(similarities) / len(similarities), 4),
        }


def configure(values: Mapping[str, Any], requested: bool) -> dict[str, Any]:
    """--answer-relevancy-questions N: how many questions the judge writes as evidence."""
    given = values.get(QUESTIONS)
    if given is None:
        return {}
    try:
        count = int(given)
    except ValueError:
        count = -1
    if not 0 <= count <= MAX_QUESTIONS:
        raise UsageError(
            f"{param(QUESTIONS)} must be a whole number from 0 to {MAX_QUESTIONS}, got {given!r}"
        )
    if not requested:
        raise UsageError(
            f"{param(QUESTIONS)} sets answer_relevancy's evidence; add -m answer_relevancy"
        )
    return {"n_questions": count}


def explain(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
    """Whether the answer turned noncommittal, how P(answers) and the questions moved."""
    lines: list[tuple[float, str]] = []
    if not base or not new:
        return lines
    q, p = base.get("noncommittal_probability"), new.get("noncommittal_probability")
    if isinstance(q, int | float) and isinstance(p, int | float) and (q >= 0.5) != (p >= 0.5):
        state = "noncommittal" if p >= 0.5 else "committal"
        lines.append((1.0, f"answer judged {state} ({q:.2f} -> {p:.2f})"))
    q, p = base.get("answers_probability"), new.get("answers_probability")
    if isinstance(q, int | float) and isinstance(p, int | float) and abs(p - q) > 1e-9:
        lines.append((abs(p - q), f"judge's P(the answer answers the question) {q:.2f} -> {p:.2f}"))
    old = pairs(base, "generated_questions", "similarities")
    now = pairs(new, "generated_questions", "similarities")
    if now and old:
        old_mean = sum(s for _, s in old) / len(old)
        new_mean = sum(s for _, s in now) / len(now)
        if abs(new_mean - old_mean) > 1e-9:
            question, similarity = min(now, key=lambda pair: pair[1])
            line = (
                f"generated questions now {new_mean:.2f} similar to the question (before "
                f"{old_mean:.2f}); least similar: {quote(question)} ({similarity:.2f})"
            )
            lines.append((abs(new_mean - old_mean), line))
    return lines


def hint(details: Details) -> Evidence | None:
    if (number(details.get("noncommittal_probability")) or 0.0) >= 0.5:
        return Evidence("the answer is noncommittal")
    answers = number(details.get("answers_probability"))
    if answers is not None and answers < 0.5:
        return Evidence(f"judged not to answer the question ({answers:.2f})")
    questions, sims = details.get("generated_questions"), details.get("similarities")
    if isinstance(questions, list) and isinstance(sims, list):
        scored = [
            (s, text(q))
            for q, raw in zip(questions, sims, strict=False)
            if (s := number(raw)) is not None
        ]
        if scored:
            similarity, question = min(scored)
            return Evidence(f"answers instead ({similarity:.2f})", question)
    return None


def notes(details: Details) -> list[Note]:
    noncommittal = number(details.get("noncommittal_probability"))
    if noncommittal is None or noncommittal < 0.5:
        return []
    return [
        Note(
            f"The judge found the answer noncommittal (probability {noncommittal:.2f} ≥ 0.5), "
            "so the score is 0.",
            low=True,
        )
    ]


SPEC = MetricSpec(
    AnswerRelevancy,
    order=20,
    default_rank=4,
    gate=0.75,
    cause="the answer wanders off the question",
    remedies=(
        "few-shot examples in the generator's prompt",
        "answer the question in the first sentence",
    ),
    explain=explain,
    hint=hint,
    table=EvidenceTable("generated question", "generated_questions", "similarities", ""),
    notes=notes,
    options=(
        MetricOption(
            QUESTIONS_FLAG,
            QUESTIONS,
            "answer_relevancy: also have the judge write N questions the answer would answer, "
            "as evidence (their similarity to the question is shown, not scored; about "
            "doubles the judge's time). Default 0.",
            metavar="N",
            old_flag="--ar-questions",
            old_dest="questions",
        ),
    ),
    configure=configure,
    verdicts="answers_probability",
    verdict_kind="answers",
)
