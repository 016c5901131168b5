"""A toy RAG pipeline over examples/docs: word-overlap retrieval, the best sentence as answer."""

import re
from pathlib import Path

DOCS = Path(__file__).parent / "docs"
CHUNKS = [p.strip() for f in sorted(DOCS.rglob("*.md")) for p in f.read_text("utf-8").split("\n\n")]
CHUNKS = [c for c in CHUNKS if c and not c.startswith("#")]  # paragraphs, not headings


def words(text: str) -> set[str]:
    return set(re.findall(r"[\u4e00-\u9fff]|\w+", text.lower()))


def answer(question: str) -> dict:
    asked = words(question)
    contexts = sorted(CHUNKS, key=lambda c: len(asked & words(c)), reverse=True)[:3]
    sentences = re.split(r"(?<=[.!?。！？])\s*", contexts[0])
    return {"answer": max(sentences, key=lambda s: len(asked & words(s))), "contexts": contexts}
