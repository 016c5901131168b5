"""The fields of an evaluation sample (docs/reference.md), and the Ragas names accepted for them."""

#: accepted alias -> canonical field name
ALIASES: dict[str, str] = {
    "user_input": "question",
    "retrieved_contexts": "contexts",
    "response": "answer",
    "reference": "reference_answer",
    "ground_truth": "reference_answer",
    "id": "sample_id",
}
CANONICAL = ("question", "contexts", "answer", "reference_answer", "sample_id", "category")
#: fields `localeval generate` writes besides those: kept in Sample.extra like any other
#: field, but not reported as unknown in a row that has all three (a generated test set)
GENERATED_FIELDS = frozenset({"kind", "reference_contexts", "source"})
