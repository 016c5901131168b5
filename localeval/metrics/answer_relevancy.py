"""Answer relevancy: whether the answer addresses the question that was asked.

Inputs: question, answer.
Output: the judge writes N questions (default 3) that the answer would answer, in the
question's language; score = mean cosine similarity between the embedded user question
and each generated question. 0 when the judge finds the answer noncommittal (probability
of "noncommittal" >= 0.5). In [0, 1] (negative cosines are clipped to 0).
Details: generated questions, their similarities, the noncommittal probability, language.
Undefined without an answer.
"""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.embedder import cosine
from localeval.metrics.base import (
    MetricResult,
    Tools,
    missing_field,
    require_embedder,
    require_judge,
)
from localeval.prompts import rag
from localeval.schema import Array, Object, Str
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
        # 1. is the answer an answer at all?
        noncommittal = judge.yes_probability(
            rag.answer_noncommittal(sample.question, sample.answer, language)
        )
        # 2. the questions this answer would answer, written in the question's language
        reply = judge.generate(
            rag.questions_for_answer(sample.answer, self.n_questions, language), self.schema
        )
        questions = [q.strip() for q in reply["questions"]]
        # 3. how close they are to the question asked
        vectors = require_embedder(tools).embed([sample.question, *questions])
        similarities = [max(0.0, cosine(vectors[0], v)) for v in vectors[1:]]
        mean = sum(similarities) / len(similarities)
        score = 0.0 if noncommittal >= 0.5 else mean
        return MetricResult(
            score,
            {
                "generated_questions": questions,
                "similarities": [round(s, 4) for s in similarities],
                "noncommittal_probability": round(noncommittal, 4),
                "language": language,
            },
        )
