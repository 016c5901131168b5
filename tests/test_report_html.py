"""The HTML report: self-contained, every dataset string escaped, evidence per sample."""

from __future__ import annotations

import builtins
from html.parser import HTMLParser
from typing import Any

import pytest
import report_data

from localeval.reports.html import render_html
from localeval.reports.radar import Series, metrics_chart_svg


class Page(HTMLParser):
    """Every element with its attributes, and the page's text."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(source)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]


def test_page_loads_nothing_and_runs_nothing() -> None:
    page = Page(render_html(report_data.results(evil=True)))
    tags = {tag for tag, _ in page.elements}
    assert not tags & {"script", "iframe", "img", "link", "object", "embed", "form", "base"}
    for tag, attrs in page.elements:
        assert not {"src", "href", "srcset", "action", "formaction"} & set(attrs), tag
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
    (csp,) = [
        a for a in page.tags("meta") if (a.get("http-equiv") or "") == "Content-Security-Policy"
    ]
    assert "default-src 'none'" in (csp["content"] or "")
    # the only <style> is the report's own, and it names no URL
    assert len(page.tags("style")) == 1
    assert "url(" not in render_html(report_data.results()).split("</style>")[0]


def test_dataset_text_is_shown_as_text() -> None:
    source = render_html(report_data.results(evil=True))
    text = "".join(Page(source).text)
    for evil in report_data.EVIL_STRINGS:
        assert evil in text  # shown to the reader literally...
    assert "<script>" not in source  # ...because it was escaped in the page source
    assert "<iframe" not in source and "<img" not in source and "<style>body" not in source
    assert "javascript:alert(2)" in text and "&lt;a href=" in source


def test_unsupported_statements_are_marked_in_the_answer() -> None:
    page = Page(render_html(report_data.results()))
    marks = page.tags("mark")
    assert marks and all(m.get("class") == "unsupported" for m in marks)
    source = render_html(report_data.results())
    # t1's second statement is unsupported: it is wrapped, the supported one is not
    assert '<mark class="unsupported" title="unsupported by the contexts (support 0.10)">' in source
    assert ">It is 300 metres tall.</mark>" in source
    assert "<mark" not in source.split("It was finished in 1889.")[1][:5]


def test_chunks_judged_not_useful_are_marked() -> None:
    source = render_html(report_data.results())
    assert '<li class="useless"><span class="tag bad">not useful 0.04</span>' in source
    assert '<li class="useful"><span class="tag good">useful 0.93</span>' in source


def test_each_sample_expands_with_details_worst_first() -> None:
    page = Page(render_html(report_data.results()))
    details = page.tags("details")
    assert len(details) == 3
    assert all("sample" in (d.get("class") or "") for d in details)
    source = render_html(report_data.results())
    # t2 (faithfulness 0.4) is further below its gate than t1 (0.5); t3 passes
    assert source.index(">t2<") < source.index(">t1<") < source.index(">t3<")
    assert [d.get("class") for d in details] == ["sample has-low", "sample has-low", "sample"]


def test_undefined_scores_show_their_reason() -> None:
    source = render_html(report_data.results())
    assert '<span class="chip undefined">context_recall undefined</span>' in source
    assert "<p>Undefined: no reference_answer</p>" in source


def test_gates_and_remedies() -> None:
    source = render_html(report_data.results())
    assert "1 of 4 quality gates failed: faithfulness" in source
    assert "Likely cause: the generator invents beyond the retrieved context." in source
    assert source.count('class="badge pass"') == 3


def test_category_table_when_there_are_several() -> None:
    source = render_html(report_data.results())
    assert "<h2>By category</h2>" in source
    assert "<td>history</td>" in source and "<td>travel</td>" in source
    one = report_data.results()
    for sample in one["samples"]:
        sample["category"] = "same"
    assert "By category" not in render_html(one)


def test_baseline_adds_a_series_and_columns() -> None:
    source = render_html(report_data.results(), report_data.baseline())
    assert 'class="series-baseline"' in source
    assert "baseline 20240525T120000-base00" in source
    assert "<th>baseline</th><th>Δ</th>" in source
    assert '<td class="num">0.650</td><td class="num">-0.050</td>' in source


def test_unknown_metric_details_are_rendered_generically() -> None:
    data = report_data.results(("faithfulness",))
    data["run"]["metrics"].append("rubric")
    data["summary"]["rubric"] = {"mean": 0.7, "n": 1, "n_undefined": 0, "ci95": None}
    sample = data["samples"][0]
    sample["scores"]["rubric"] = 0.7
    sample["details"]["rubric"] = {
        "criteria": {"accuracy": 7, "tone": "<b>ok</b>"},
        "feedback": "Mostly <i>right</i>.",
    }
    source = render_html(data)
    assert "<h3>rubric: 0.700</h3>" in source
    assert "<dt>accuracy</dt><dd>7</dd>" in source
    assert "&lt;b&gt;ok&lt;/b&gt;" in source and "Mostly &lt;i&gt;right&lt;/i&gt;." in source


def test_noncommittal_answer_is_explained() -> None:
    data = report_data.results()
    relevancy = data["samples"][0]["details"]["answer_relevancy"]
    relevancy["noncommittal_probability"] = 0.8
    assert "The judge found the answer noncommittal (probability 0.80" in render_html(data)


def test_odd_values_in_a_results_file_do_not_break_the_page() -> None:
    data = report_data.results()
    data["samples"][0]["scores"]["faithfulness"] = "high"
    data["samples"][0]["details"]["faithfulness"] = ["not", "a", "dict"]
    data["samples"][1]["details"] = None
    data["samples"][1]["contexts"] = "not a list"
    data["summary"]["faithfulness"]["mean"] = float("nan")
    data["run"]["usage"] = None
    source = render_html(data)
    assert "<h3>faithfulness: -</h3>" in source
    assert '<td>faithfulness</td><td class="num low">-</td>' in source
    assert "nan" not in "".join(Page(source).text).lower().split()


def test_rendering_opens_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths named in the data (dataset, chunks) are text to show, never files to open."""
    opened: list[Any] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[0] if args else kwargs)
        raise AssertionError(f"report rendering opened {args[0] if args else kwargs!r}")

    data = report_data.results(evil=True)
    monkeypatch.setattr(builtins, "open", spy)
    source = render_html(data)
    assert opened == []
    assert "../../secret/data.jsonl" in source and "../../etc/passwd" in source


def test_chart_is_a_radar_from_three_metrics_and_bars_below() -> None:
    series = [Series("this run", "run", [0.5, 0.9, 0.7]), Series("gate", "threshold", [0.8] * 3)]
    radar = metrics_chart_svg(["a", "b", "c"], series)
    assert radar.startswith('<svg class="chart radar"') and radar.count("<polygon") == 4 + 2
    bars = metrics_chart_svg(["a", "b"], [Series("this run", "run", [0.5, None])])
    assert bars.startswith('<svg class="chart bars"') and "n/a" in bars
    one = metrics_chart_svg(["a"], [Series("this run", "run", [0.5])])
    assert 'class="series-run"' in one and "<polygon" not in one
    assert metrics_chart_svg([], []) == ""


def test_chart_places_values_on_the_axes() -> None:
    svg = metrics_chart_svg(["a", "b", "c", "d"], [Series("this run", "run", [1.0, 0.5, 0.0, 2.0])])
    # radius 130 around (280, 175); axis a points up, b right, c down, d left
    assert 'points="280.0,45.0 345.0,175.0 280.0,175.0 150.0,175.0"' in svg
    with pytest.raises(ValueError):
        metrics_chart_svg(["a", "b"], [Series("x", "run", [0.1])])


def test_gaps_in_a_series_are_ticks_not_a_polygon_through_zero() -> None:
    svg = metrics_chart_svg(
        ["a", "b", "c"],
        [
            Series("this run", "run", [0.5, 0.5, 0.5]),
            Series("gate", "threshold", [0.8, None, 0.6]),
        ],
    )
    assert svg.count('<polygon class="series-threshold"') == 0
    assert svg.count('<line class="series-threshold"') == 2
    # the tick on axis a (pointing up) is horizontal, at 0.8 of the radius above the centre
    assert '<line class="series-threshold" x1="271.0" y1="71.0" x2="289.0" y2="71.0"' in svg


#: an answer that reads "France" on screen while its characters say "ecnarF", as the judge
#: read them: a right-to-left override (U+202E) up to a pop (U+202C)
REVERSED = "It is in \u202eecnarF\u202c."


def test_a_bidi_override_is_shown_as_a_placeholder_not_obeyed() -> None:
    data = report_data.results()
    sample = data["samples"][0]
    sample["answer"] = REVERSED
    sample["category"] = "\u2067history"
    sample["details"]["faithfulness"]["statements"][0] = REVERSED
    source = render_html(data)
    for control in ("\u202e", "\u202c", "\u2067"):
        assert control not in source
    text = "".join(Page(source).text)
    assert "It is in \ufffdecnarF\ufffd." in text  # in the order the judge read it
    assert "\ufffdhistory" in text
