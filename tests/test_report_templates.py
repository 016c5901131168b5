"""The report's templates escape every value they write, whether or not the template asks."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from importlib import resources
from pathlib import Path

import report_data

from localeval.reports.html import render_html
from localeval.reports.templating import ENV

ROOT = Path(__file__).resolve().parents[1]

HOSTILE = 'x" onmouseover="alert(1)\u202e<script>alert(2)</script>\x1b[31m'


def test_a_value_written_without_a_filter_is_escaped_anyway() -> None:
    # as a template author might add a value: no |e, in text and in an attribute
    template = ENV.from_string('<p title="{{ value }}">{{ value }}</p>{{ number }}')
    page = template.render(value=HOSTILE, number=0.5)
    assert "<script>" not in page and '" onmouseover' not in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "x&quot; onmouseover=&quot;alert(1)" in page
    # the bidi override and the escape character are shown as placeholders, not obeyed
    assert "\u202e" not in page and "\x1b" not in page and page.count("\ufffd") == 4
    assert page.endswith("0.5")


def test_markup_a_macro_made_is_not_escaped_twice() -> None:
    template = ENV.from_string(
        "{% macro bold(x) %}<b>{{ x }}</b>{% endmacro %}<p>{{ bold(value) }}</p>"
    )
    assert template.render(value="a<b") == "<p><b>a&lt;b</b></p>"


def test_every_template_ships_as_package_data() -> None:
    # setuptools copies only the files its package-data globs name into a wheel
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["localeval"]
    templates = resources.files("localeval.reports").joinpath("templates")
    names = [f"reports/templates/{p.name}" for p in templates.iterdir()]
    assert names and all(any(fnmatch(name, g) for g in globs) for name in names), names


def test_a_line_break_in_a_template_is_layout_not_output() -> None:
    template = ENV.from_string("<ul>\n  <li>{{ a }}</li>\n  <li>b</li>{{ NL }}</ul>")
    assert template.render(a=1) == "<ul><li>1</li><li>b</li>\n</ul>"


def test_the_rendered_report_is_a_plain_string() -> None:
    assert type(render_html(report_data.results())) is str


def test_the_review_page_escapes_a_value_it_is_given() -> None:
    from localeval.review.app import PAGES, asset, page

    # served as written: the page takes the run as JSON, not from its template
    assert page() == asset("page.html")
    template = PAGES.from_string("<span id=run>{{ run_id }}</span>\n")
    assert template.render(run_id=HOSTILE) == (
        "<span id=run>x&quot; onmouseover=&quot;alert(1)\ufffd&lt;script&gt;alert(2)"
        "&lt;/script&gt;\ufffd[31m</span>\n"
    )
