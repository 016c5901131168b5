"""The Markdown report: a PR-comment summary that dataset text cannot inject into."""

from __future__ import annotations

import re

import report_data
from markdown_it import MarkdownIt

from localeval.reports.markdown import md_code, render_markdown


def to_html(markdown: str) -> str:
    """Rendered as a CommonMark viewer with tables and raw HTML allowed (as GitHub's) would."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def test_summary_gates_and_remedies() -> None:
    text = render_markdown(report_data.results())
    assert text.startswith("### ❌ localeval: 1 of 4 quality gates failed\n")
    assert "| `faithfulness` | 0.600 | 0.500–0.700 | 0 | ≥ 0.80 | ❌ |" in text
    assert "| `context_recall` | 0.850 | 0.750–0.950 | 1 | ≥ 0.70 | ✅ |" in text
    assert (
        "- ❌ `faithfulness = 0.600, below the threshold 0.80`. Likely cause: the generator "
        "invents beyond the retrieved context. Try: a stricter system prompt" in text
    )
    passing = report_data.results()
    for gate in passing["gates"]:
        gate["passed"] = True
    assert render_markdown(passing).startswith("### ✅ localeval: all 4 quality gates pass\n")


def test_worst_samples_with_evidence() -> None:
    text = render_markdown(report_data.results(), worst=2)
    rows = [line for line in text.splitlines() if line.startswith("| `t")]
    assert rows == [
        "| `t2` | `history` | `faithfulness` | 0.400 ❌ | unsupported: `It is 300 metres tall.` |",
        "| `t1` | `history` | `faithfulness` | 0.500 ❌ | unsupported: `It is 300 metres tall.` |",
    ]
    assert "<details><summary>2 worst samples</summary>" in text
    assert "worst samples" not in render_markdown(report_data.results(), worst=0)


def test_baseline_columns() -> None:
    text = render_markdown(report_data.results(), report_data.baseline())
    assert "| `faithfulness` | 0.600 | 0.500–0.700 | 0 | ≥ 0.80 | ❌ | 0.650 | -0.050 |" in text
    assert "Baseline: run `20240525T120000-base00`." in text


def test_dataset_text_cannot_inject_markup() -> None:
    text = render_markdown(report_data.results(evil=True), worst=10)
    html = to_html(text)
    # our own markup only: the table, code spans, the <details> wrapper
    tags = set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", html))
    assert tags <= {
        "h3",
        "p",
        "code",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "ul",
        "li",
        "strong",
        "details",
        "summary",
    }, tags
    assert "<img" not in html and "<a " not in html and "<script" not in html
    assert "&lt;script&gt;alert(&quot;id&quot;)&lt;/script&gt;" in html
    # a pipe in dataset text stays inside its cell: every table row has the header's cells
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        widths = {
            row.count("<td") + row.count("<th")
            for row in re.findall(r"<tr>.*?</tr>", table, flags=re.S)
        }
        assert len(widths) == 1, widths


def test_md_code_spans() -> None:
    assert md_code("plain") == "`plain`"
    assert md_code("a `tick` here") == "``a `tick` here``"
    assert md_code("`edge`") == "`` `edge` ``"
    assert md_code("a|b") == "`a\\|b`" and md_code("a|b", in_table=False) == "`a|b`"
    assert md_code("two\nlines\tand  spaces") == "`two lines and spaces`"
    assert md_code("") == "*(empty)*" and md_code(None) == "*(empty)*"
    assert md_code("x" * 500, limit=10) == "`xxxxxxxxx…`"
    assert md_code("left\u202eright\x00") == "`left�right�`"
    for text in ("![i](https://evil.example/i.png)", "<b>x</b>", "[l](javascript:x)", "**b**"):
        assert to_html(md_code(text, in_table=False)).startswith("<p><code>")


def test_relevancy_evidence_says_when_the_judge_finds_no_answer() -> None:
    from localeval.results.view import evidence_hint

    details = {
        "noncommittal_probability": 0.2,
        "answers_probability": 0.3,
        "generated_questions": ["What is Paris?"],
        "similarities": [0.4],
    }
    hint = evidence_hint("answer_relevancy", details)
    assert hint is not None
    assert hint.plain() == "judged not to answer the question (0.30)"
    hint = evidence_hint("answer_relevancy", {**details, "answers_probability": 0.7})
    assert hint is not None
    assert hint.plain() == "answers instead (0.40): What is Paris?"
