"""Chunking: at headings and paragraphs, within the token budget, nothing lost."""

from __future__ import annotations

from localeval.testset.chunking import chunk_document, estimate_tokens
from localeval.testset.documents import Block, Document


def doc(*blocks: tuple[str, str], path: str = "docs/a.md") -> Document:
    return Document(
        path, "docs", tuple(Block(kind, text, i + 1) for i, (kind, text) in enumerate(blocks))
    )


PARA = "The appliance copies every server each night and keeps the copies for a year."  # 16


def test_estimate_counts_words_punctuation_and_cjk_characters() -> None:
    assert estimate_tokens("Port 7443, TCP.") == 5
    assert estimate_tokens("端口是7443。") == 5


def test_each_heading_starts_a_chunk_headed_by_it() -> None:
    blocks = (("heading", "Power"), ("text", PARA), ("text", PARA), ("text", PARA))
    chunks = chunk_document(doc(*blocks, ("heading", "Ports"), ("text", PARA)), budget=300)
    assert [c.section for c in chunks] == ["Power", "Ports"]
    assert chunks[0].text == f"Power\n\n{PARA}\n\n{PARA}\n\n{PARA}"
    assert chunks[1].text == f"Ports\n\n{PARA}"  # the last section, kept though short
    assert [c.position for c in chunks] == [1, 5]  # the heading's line
    assert [c.index for c in chunks] == [0, 1]
    assert chunks[0].source() == {"file": "docs/a.md", "line": 1, "section": "Power"}


def test_paragraphs_are_packed_up_to_the_budget() -> None:
    paragraphs = [("text", f"{PARA} ({n})") for n in range(6)]  # 19 tokens each
    chunks = chunk_document(doc(("heading", "Power"), *paragraphs), budget=60)
    assert all(estimate_tokens(c.text) <= 60 for c in chunks)
    assert len(chunks) == 2  # 1 + 3 x 19 tokens each
    assert all(c.text.startswith("Power\n\n") for c in chunks)
    assert [c.position for c in chunks] == [1, 5]  # the heading, then the paragraph


def test_a_long_paragraph_is_cut_at_sentences_and_a_long_sentence_at_words() -> None:
    long_sentence = " ".join(["word"] * 90) + "."
    chunks = chunk_document(doc(("text", f"{PARA} {PARA} {long_sentence}")), budget=40)
    assert all(estimate_tokens(c.text) <= 40 for c in chunks)
    joined = " ".join(c.text for c in chunks)
    assert joined.count("word") == 90 and joined.count("appliance") == 2


def test_chinese_without_spaces_is_cut_by_characters_and_detected() -> None:
    text = "终端支持热插拔" * 30  # 210 characters, no sentence end
    chunks = chunk_document(doc(("heading", "电池"), ("text", text)), budget=50)
    assert all(estimate_tokens(c.text) <= 50 for c in chunks)
    assert "".join(c.text.removeprefix("电池\n\n") for c in chunks) == text
    assert {c.language for c in chunks} == {"zh"}


def test_a_section_too_short_to_ask_about_joins_the_next() -> None:
    chunks = chunk_document(
        doc(
            ("heading", "Manual"),
            ("text", "Read this first."),
            ("heading", "Power"),
            ("text", PARA * 3),
        ),
        budget=300,
    )
    assert len(chunks) == 1
    assert chunks[0].text.startswith("Manual\n\nRead this first.\n\nPower\n\n")
    assert chunks[0].section == "Power" and chunks[0].position == 1


def test_a_short_last_section_is_kept() -> None:
    chunks = chunk_document(
        doc(("heading", "A"), ("text", PARA * 3), ("heading", "B"), ("text", "Tiny.")), 300
    )
    assert [c.section for c in chunks] == ["A", "B"]
