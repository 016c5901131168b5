"""Answer relevancy: whether the answer addresses the question that was asked.

Inputs: question, answer.
Output: the judge's probability that the answer answers the question (one yes/no question
after the answer); 0 when the judge finds the answer noncommittal (probability of
"noncommittal" >= 0.5). In [0, 1].
Evidence: the judge also writes N questions (default 3) that the answer would answer, in
the question's language, and their cosine similarity to the question asked is kept in
details (question_similarity). It is not the score: measured on WikiEval with the 0.5B
default judge, that similarity ranks the poor answer of a pair above the good one (pair
accuracy 0.40), because a vague answer restates the question while a full one answers
its parts; the direct question ranks the good one higher in 0.76 of the pairs.
Details: answers_probability, generated questions, their similarities and mean, the
noncommittal probability, language.
Undefined without an answer. An answer too long for the judge's window is judged on its
beginning, as much as fits (localeval.metrics.long_context), said in details.
"""

from __future__ import annotations

from typing import Any

from localeval.data.samples import Sample
from localeval.embedder import cosine
from localeval.metrics.base import (
    MetricResult,
    Tools,
    missing_field,
    require_embedder,
    require_judge,
)
from localeval.metrics.long_context import NoRoomForContext, fit_text
from localeval.prompts import rag
from localeval.schema import Array, Object, Str, max_bytes
from localeval.text import detect_language

QUESTION_CHARS = 200


class AnswerRelevancy:
    name = "answer_relevancy"
    needs = ("question", "answer")
    uses_judge = True
    uses_embedder = True

    def __init__(self, n_questions: int = 3):
        self.n_questions = n_questions
        self.schema = Object((("questions", Array(Str(QUESTION_CHARS), n_questions, n_questions)),))

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.answer is not None
        judge = require_judge(tools)
        language = detect_language(sample.question)
        # 0. as much of the answer as the prompts hold: all of it, but for a huge answer (the
        # prompt that quotes the question is the longest yes/no one: what fits there fits
        # the other)
        try:
            answer = fit_text(
                judge,
                sample.answer,
                lambda text: rag.answer_answers(sample.question, text, language),
                reserve=1,
            )
        except NoRoomForContext:
            return MetricResult.undefined("the question is too long for the judge's context window")
        try:
            answer = fit_text(
                judge,
                answer,
                lambda text: rag.questions_for_answer(text, self.n_questions, language),
                reserve=max_bytes(self.schema) + 1,
            )
        except NoRoomForContext:
            return MetricResult.undefined(
                "the judge's context window is too small to write the questions "
                f"(they need up to {max_bytes(self.schema) + 1} tokens; raise n_ctx)"
            )
        # 1. is the answer an answer at all?
        noncommittal = judge.yes_probability(rag.answer_noncommittal(answer, language))
        # 2. does it answer the question asked?
        answers = judge.yes_probability(rag.answer_answers(sample.question, answer, language))
        # 3. evidence: the questions this answer would answer, in the question's language
        reply = judge.generate(
            rag.questions_for_answer(answer, self.n_questions, language), self.schema
        )
        questions = [q.strip() for q in reply["questions"]]
        # ... and how close they are to the question asked
        vectors = require_embedder(tools).embed([sample.question, *questions])
        similarities = [max(0.0, cosine(vectors[0], v)) for v in vectors[1:]]
        mean = sum(similarities) / len(similarities)
        score = 0.0 if noncommittal >= 0.5 else answers
        details: dict[str, Any] = {
            "answers_probability": round(answers, 4),
            "generated_questions": questions,
            "similarities": [round(s, 4) for s in similarities],
            "question_similarity": round(mean, 4),
            "noncommittal_probability": round(noncommittal, 4),
            "language": language,
        }
        if answer != sample.answer:
            details["long_context"] = {
                "rule": "answer too long for the judge's window: its beginning judged",
                "answer_chars": len(sample.answer),
                "judged_chars": len(answer),
            }
        return MetricResult(score, details)
