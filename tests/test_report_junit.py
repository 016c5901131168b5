"""JUnit XML: a test case per gate, optionally per sample, valid XML whatever the data holds."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import report_data

from localeval.reports.junit import render_junit


def parse(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(text.encode("utf-8"))


def test_one_case_per_gate() -> None:
    root = parse(render_junit(report_data.results()))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("4", "1", "0")
    assert root.get("time") == "12.500"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "localeval quality gates"
    assert suite.get("timestamp") == "2024-06-01T12:00:00+00:00"
    names = [case.get("name") for case in suite.findall("testcase")]
    assert names == ["context_precision", "faithfulness", "context_recall", "answer_relevancy"]
    failures = {c.get("name"): c.find("failure") for c in suite.findall("testcase")}
    assert [n for n, f in failures.items() if f is not None] == ["faithfulness"]
    failure = failures["faithfulness"]
    assert failure is not None
    assert failure.get("type") == "QualityGateFailed"
    assert failure.get("message") == "faithfulness = 0.600, below the threshold 0.80"
    assert "Likely cause: the generator invents beyond the retrieved context." in (
        failure.text or ""
    )
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["run"] == "20240601T120000-abcdef" and props["judge"] == "scripted"


def test_gate_undefined_for_every_sample_fails() -> None:
    data = report_data.results(("faithfulness",))
    data["gates"][0].update(value=None, passed=False)
    failure = parse(render_junit(data)).find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == (
        "faithfulness = undefined for every sample, below the threshold 0.80"
    )


def test_per_sample_cases() -> None:
    data = report_data.results()
    data["samples"].append(
        {
            "sample_id": "t4",
            "category": None,
            "scores": {"faithfulness": None},
            "details": {"faithfulness": {"undefined_reason": "no answer"}},
        }
    )
    root = parse(render_junit(data, samples=True))
    gates, samples = root.findall("testsuite")
    assert gates.get("name") == "localeval quality gates"
    assert samples.get("name") == "localeval samples"
    assert (samples.get("tests"), samples.get("failures"), samples.get("skipped")) == (
        "4",
        "2",
        "1",
    )
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("8", "3", "1")
    cases = {c.get("name"): c for c in samples.findall("testcase")}
    failure = cases["t2"].find("failure")
    assert failure is not None
    assert failure.get("message") == "faithfulness 0.400 < 0.80"
    assert failure.text == "faithfulness = 0.400, below 0.80\n  unsupported: It is 300 metres tall."
    assert cases["t3"].find("failure") is None and cases["t3"].find("skipped") is None
    skipped = cases["t4"].find("skipped")
    assert skipped is not None
    assert (
        skipped.get("message") == "no metric could be scored (faithfulness: undefined: no answer)"
    )


def test_dataset_text_stays_valid_xml() -> None:
    data = report_data.results(evil=True)
    data["samples"][0]["sample_id"] = "bad\x00id\x1b]"
    root = parse(render_junit(data, samples=True))
    names = [c.get("name") for c in root.iter("testcase")]
    assert report_data.EVIL_ID in names
    assert "bad\ufffdid\ufffd]" in names
