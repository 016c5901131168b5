"""Hand-written results dicts (results.json, docs/reference.md) for the report tests."""

from __future__ import annotations

import copy
from typing import Any

#: dataset text that would run, link, load or format something if a report did not escape it
EVIL_ID = '<script>alert("id")</script>'
EVIL_QUESTION = "Click [here](javascript:alert(1)) or <a href='javascript:alert(2)'>here</a>?"
EVIL_ANSWER = (
    "![tracker](https://evil.example/pixel.png) It is <img src=https://evil.example/x.png "
    "onerror=alert(3)>. Also @everyone see www.evil.example and `code` | pipe."
)
EVIL_CHUNK = "<style>body{background:url(https://evil.example/bg.png)}</style> ../../etc/passwd"
EVIL_CATEGORY = '"><iframe src="https://evil.example/frame"></iframe> | cell'
EVIL_STRINGS = (EVIL_ID, EVIL_QUESTION, EVIL_ANSWER, EVIL_CHUNK, EVIL_CATEGORY)


def _sample(
    sample_id: str,
    category: str,
    scores: dict[str, float | None],
    *,
    question: str = "When was the tower finished?",
    answer: str = "It was finished in 1889. It is 300 metres tall.",
    contexts: list[str] | None = None,
) -> dict[str, Any]:
    contexts = contexts if contexts is not None else ["The tower was finished in 1889.", "Noise."]
    faith = scores.get("faithfulness")
    details: dict[str, Any] = {
        "faithfulness": {
            "statements": ["It was finished in 1889.", "It is 300 metres tall."],
            "verdicts": ["supported", "unsupported" if (faith or 0) < 0.8 else "supported"],
            "support": [0.95, 0.1 if (faith or 0) < 0.8 else 0.9],
        },
        "answer_relevancy": {
            "generated_questions": ["When was the tower finished?", "How tall is it?"],
            "similarities": [0.97, 0.42],
            "noncommittal_probability": 0.02,
            "language": "en",
        },
        "context_recall": {
            "statements": ["In 1889."],
            "verdicts": ["attributed"],
            "attribution": [0.91],
        },
        "context_precision": {
            "judged_against": "reference_answer",
            "verdicts": ["useful", "not useful"],
            "usefulness": [0.93, 0.04],
        },
    }
    for metric, score in scores.items():
        if score is None:
            details[metric] = {"undefined_reason": "no reference_answer"}
    return {
        "sample_id": sample_id,
        "category": category,
        "scores": scores,
        "details": {m: details[m] for m in scores},
        "question": question,
        "answer": answer,
        "reference_answer": "In 1889.",
        "contexts": contexts,
    }


def results(
    metrics: tuple[str, ...] = (
        "context_precision",
        "faithfulness",
        "context_recall",
        "answer_relevancy",
    ),
    evil: bool = False,
) -> dict[str, Any]:
    """A run of three samples; faithfulness fails its gate (0.60 < 0.80), the rest pass."""
    rows = [
        (
            "t1",
            "history",
            {
                "faithfulness": 0.5,
                "answer_relevancy": 0.9,
                "context_recall": 0.9,
                "context_precision": 0.8,
            },
        ),
        (
            "t2",
            "history",
            {
                "faithfulness": 0.4,
                "answer_relevancy": 0.8,
                "context_recall": 0.8,
                "context_precision": 0.9,
            },
        ),
        (
            "t3",
            "travel",
            {
                "faithfulness": 0.9,
                "answer_relevancy": 0.85,
                "context_recall": None,
                "context_precision": 0.7,
            },
        ),
    ]
    samples = [
        _sample(sid, cat, {m: s for m, s in scores.items() if m in metrics})
        for sid, cat, scores in rows
    ]
    if evil:
        samples.append(
            _sample(
                EVIL_ID,
                EVIL_CATEGORY,
                {m: 0.1 for m in metrics},
                question=EVIL_QUESTION,
                answer=EVIL_ANSWER,
                contexts=[EVIL_CHUNK, "Noise."],
            )
        )
        samples[-1]["details"]["faithfulness"] = {
            "statements": [EVIL_ANSWER],
            "verdicts": ["unsupported"],
            "support": [0.1],
        }
    means = {
        "faithfulness": 0.6,
        "answer_relevancy": 0.85,
        "context_recall": 0.85,
        "context_precision": 0.8,
    }
    thresholds = {
        "faithfulness": 0.8,
        "answer_relevancy": 0.75,
        "context_recall": 0.7,
        "context_precision": 0.65,
    }
    return {
        "run": {
            "id": "20240601T120000-abcdef",
            "created": "2024-06-01T12:00:00+00:00",
            "dataset": "../../secret/data.jsonl" if evil else "data.jsonl",
            "judge": {"name": "scripted", "sha256": "0" * 64},
            "embedder": {"name": "fake-embedder"},
            "metrics": list(metrics),
            "prompt_version": "rag-1",
            "usage": {
                "judge_calls": 30,
                "cached_calls": 0,
                "prompt_tokens": 900,
                "generated_tokens": 40,
                "seconds": 12.5,
            },
        },
        "summary": {
            m: {
                "mean": means[m],
                "n": 3 if m != "context_recall" else 2,
                "n_undefined": 0 if m != "context_recall" else 1,
                "ci95": [means[m] - 0.1, min(1, means[m] + 0.1)],
            }
            for m in metrics
        },
        "gates": [
            {
                "metric": m,
                "threshold": thresholds[m],
                "value": means[m],
                "passed": means[m] >= thresholds[m],
            }
            for m in metrics
        ],
        "samples": samples,
    }


def baseline(metrics: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The same run a week earlier: every mean 0.05 higher."""
    data = results(metrics) if metrics else results()
    data = copy.deepcopy(data)
    data["run"]["id"] = "20240525T120000-base00"
    for entry in data["summary"].values():
        entry["mean"] = round(entry["mean"] + 0.05, 3)
    return data
