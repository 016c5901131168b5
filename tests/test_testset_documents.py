"""Reading documents for `localeval generate`: formats, categories, and bad files skipped."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import pytest

from localeval.errors import UsageError
from localeval.testset.documents import (
    Found,
    Skipped,
    decode_text,
    find_documents,
    html_blocks,
    markdown_blocks,
    read_document,
    read_documents,
    text_blocks,
)


def test_markdown_headings_and_paragraphs_with_their_lines() -> None:
    text = "---\ntitle: x\n---\n# Title\n\nFirst para\nline two.\n\nSetext\n------\n\nLast.\n"
    blocks = markdown_blocks(text)
    assert [(b.kind, b.text, b.position) for b in blocks] == [
        ("heading", "Title", 4),
        ("text", "First para\nline two.", 6),
        ("heading", "Setext", 9),
        ("text", "Last.", 12),
    ]


def test_markdown_code_fence_is_one_paragraph_and_hides_hashes() -> None:
    blocks = markdown_blocks("Intro.\n\n```\n# not a heading\n\nstill code\n```\n")
    assert [b.kind for b in blocks] == ["text", "text"]
    assert "# not a heading" in blocks[1].text and "still code" in blocks[1].text


def test_plain_text_paragraphs() -> None:
    blocks = text_blocks("One.\nStill one.\n\n\nTwo.\n")
    assert [(b.text, b.position) for b in blocks] == [("One.\nStill one.", 1), ("Two.", 5)]


def test_html_keeps_headings_and_text_but_not_scripts_styles_or_navigation() -> None:
    page = (
        "<html><head><title>T</title><style>p {}</style></head><body>"
        "<nav>Menu</nav><script>var x = 1;</script>\n<h2>Ports</h2>\n"
        "<p>Agents use <b>TCP 7443</b>.</p><ul><li>One</li><li>Two &amp; three</li></ul>"
        "</body></html>"
    )
    blocks = html_blocks(page)
    assert [(b.kind, b.text) for b in blocks] == [
        ("heading", "Ports"),
        ("text", "Agents use TCP 7443."),
        ("text", "One"),
        ("text", "Two & three"),
    ]
    assert blocks[0].position == 2


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty (no text)"),
        (b"  \n\t\n", "empty (no text)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data, not text"),
        ("旧版说明".encode("gb18030"), "not UTF-8 text (byte 0xbe at offset 0); convert it, "
         "e.g. iconv -f GB18030 -t UTF-8"),
        (b"ok " + bytes(range(1, 9)) * 20, "binary data, not text"),
    ],
)  # fmt: skip
def test_bad_bytes_are_not_text(data: bytes, reason: str) -> None:
    assert decode_text(data) == reason


def test_utf8_bom_and_utf16_are_text() -> None:
    assert decode_text("\ufeffHello\r\nworld".encode()) == "Hello\nworld"
    assert decode_text("你好".encode("utf-16")) == "你好"


def test_bad_documents_are_skipped_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# A\n\nSome text here.\n", encoding="utf-8")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "image.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "gbk.txt").write_bytes("中文".encode("gbk"))
    (tmp_path / "headings-only.md").write_text("# Only\n\n## Headings\n", encoding="utf-8")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    found, skipped = find_documents([tmp_path])
    documents, unreadable = read_documents(found)
    assert skipped == []
    assert [d.path.rsplit("/", 1)[-1] for d in documents] == ["good.md"]
    reasons = {s.path.rsplit("/", 1)[-1]: s.reason for s in unreadable}
    assert reasons["empty.txt"] == "empty (no text)"
    assert reasons["image.txt"] == "binary data, not text"
    assert reasons["gbk.txt"].startswith("not UTF-8 text (byte 0xd6 at offset 0)")
    assert reasons["headings-only.md"] == "empty (no text)"
    pdf_reason = "not a readable PDF (" if find_spec("pypdf") else "reading PDF needs the pypdf"
    assert reasons["broken.pdf"].startswith(pdf_reason)


def test_folders_are_read_recursively_in_order_with_categories(tmp_path: Path) -> None:
    for name in ("b/two.md", "a/one.txt", "top.html", ".hidden/x.md", "a/.secret.md", "a/x.csv"):
        path = tmp_path / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("text", encoding="utf-8")
    found, skipped = find_documents([tmp_path / "docs"])
    assert [(f.path.relative_to(tmp_path / "docs").as_posix(), f.category) for f in found] == [
        ("a/one.txt", "a"),
        ("b/two.md", "b"),
        ("top.html", "docs"),
    ]
    assert skipped == []


def test_a_named_file_counts_once_and_an_unknown_type_is_skipped(tmp_path: Path) -> None:
    doc = tmp_path / "manual" / "guide.md"
    doc.parent.mkdir()
    doc.write_text("# G\n\ntext\n", encoding="utf-8")
    other = tmp_path / "data.csv"
    other.write_text("a,b\n", encoding="utf-8")
    found, skipped = find_documents([doc, tmp_path / "manual", other])
    assert found == [Found(doc, "manual")]
    assert skipped == [Skipped(other.as_posix(), "unknown file type '.csv'")]


def test_a_missing_input_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no-such: no such file or folder"):
        find_documents([tmp_path / "no-such"])


def _pdf(text: str) -> bytes:
    """A one-page PDF with `text` in its text layer (written by hand: no PDF writer needed)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R"
        b" >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return out


def test_pdf_text_layer_is_read_page_by_page(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    path = tmp_path / "guide.pdf"
    path.write_bytes(_pdf("Agents reach the appliance on TCP port 7443."))
    document = read_document(Found(path, "manuals"))
    assert not isinstance(document, Skipped), document
    assert document.unit == "page"
    assert [(b.text, b.position) for b in document.blocks] == [
        ("Agents reach the appliance on TCP port 7443.", 1)
    ]
