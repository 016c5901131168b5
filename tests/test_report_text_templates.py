"""The Markdown and JUnit reports' templates make every value inert whether or not the
template asks: in Markdown a code span that cannot end its table cell or row, in JUnit XML
escaped as an attribute value."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET

import report_data

from localeval.reports.junit import XML, render_junit
from localeval.reports.markdown import MD, render_markdown

#: a cell's text that would split it (a pipe) or end the row (a line break), and backticks
BREAKING = "a | b\nc\r\nd`e`` |"
#: a pipe that Markdown reads as a column border (not escaped)
BORDER = re.compile(r"(?<!\\)\|")


def test_a_markdown_value_written_without_a_filter_stays_in_its_cell() -> None:
    row = MD.from_string("| {{ value }} | {{ number }} |").render(value=BREAKING, number=3)
    assert row == "| ```a \\| b c d`e`` \\|``` | 3 |"
    assert len(BORDER.findall(row)) == 3


def test_table_cells_with_pipes_and_line_breaks_keep_the_tables_shape() -> None:
    results = copy.deepcopy(report_data.results())
    for sample in results["samples"]:
        sample["category"] = BREAKING
        sample["sample_id"] = BREAKING + sample["sample_id"]
    # a metric (a plugin's, say) named to break the summary table
    named = f"faithfulness |\n{BREAKING}"
    results["summary"][named] = results["summary"].pop("faithfulness")
    metrics = results["run"]["metrics"]
    metrics[metrics.index("faithfulness")] = named
    for gate in results["gates"]:
        gate["metric"] = named if gate["metric"] == "faithfulness" else gate["metric"]
    for sample in results["samples"]:
        sample["scores"][named] = sample["scores"].pop("faithfulness")
    report = render_markdown(results, report_data.baseline(), worst=10)
    tables = [block.splitlines() for block in report.split("\n\n") if block.startswith("| ")]
    assert len(tables) == 2
    for table in tables:
        columns = len(BORDER.findall(table[0]))
        assert len(table) > 2 and all(len(BORDER.findall(line)) == columns for line in table)
        assert all(line.startswith("|") and line.endswith("|") for line in table)
    assert "```faithfulness \\| a \\| b c d`e`` \\|```" in tables[0][2] + tables[0][3]


def test_a_junit_value_written_without_a_filter_is_escaped() -> None:
    hostile = 'x" onload="y <b>&amp;\n\x00'
    document = XML.from_string('<a b="{{ value }}">{{ value }}</a>').render(value=hostile)
    parsed = ET.fromstring(document)
    # as an attribute value, the line break kept; the NUL no XML can hold as a placeholder
    assert parsed.get("b") == parsed.text == 'x" onload="y <b>&amp;\n\ufffd'
    assert "<b>" not in document and '" onload' not in document


def test_the_junit_report_of_hostile_text_is_the_text() -> None:
    results = copy.deepcopy(report_data.results())
    results["run"]["dataset"] = BREAKING
    for sample in results["samples"]:
        sample["sample_id"] = BREAKING + sample["sample_id"]
    parsed = ET.fromstring(render_junit(results, samples=True).encode("utf-8"))
    assert parsed.find(".//property[@name='dataset']").get("value") == BREAKING  # type: ignore[union-attr]
    names = [case.get("name") for case in parsed.iter("testcase")]
    assert [n for n in names if n and n.startswith(BREAKING)] == [
        BREAKING + s["sample_id"] for s in report_data.results()["samples"]
    ]
