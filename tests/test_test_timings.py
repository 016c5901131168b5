"""scripts/test_timings.py: the test-timings page from pytest's JUnit XML and console
output, so that no doc's prose carries test timings."""

from __future__ import annotations

from pathlib import Path

import pytest
from script_modules import load_script

timings = load_script("test_timings")

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="3" time="12.5">
<testcase classname="tests.test_a" name="test_fast" time="0.25"/>
<testcase classname="tests.test_a" name="test_slow" time="9.75"><failure message="no"/></testcase>
<testcase classname="tests.test_b" name="test_skipped" time="0.0"><skipped message="x"/></testcase>
</testsuite></testsuites>
"""
CONSOLE = """...F
============================= slowest 3 durations ==============================
355.13s call     tests/test_notebook_real.py::test_the_demo_notebook
2.00s setup    tests/test_notebook_real.py::test_the_demo_notebook
52.35s call     tests/test_testing_real.py::test_fast_judge
1 failed, 2 passed, 17 deselected in 508.51s (0:08:28)
"""


def test_a_junit_run_gives_its_counts_time_and_slowest_tests(tmp_path: Path) -> None:
    (tmp_path / "run.xml").write_text(JUNIT, encoding="utf-8")
    suite = timings.read_suite("pytest -m x", tmp_path / "run.xml")
    assert suite.counts == {"passed": 1, "failed": 1, "skipped": 1}
    assert suite.seconds == 12.5
    assert suite.slowest[0] == (9.75, "tests/test_a.py::test_slow")


def test_a_console_run_adds_each_tests_phases_and_leaves_deselected_out(tmp_path: Path) -> None:
    (tmp_path / "run.log").write_text(CONSOLE, encoding="utf-8")
    suite = timings.read_suite("real", tmp_path / "run.log")
    assert suite.slowest[0] == (357.13, "tests/test_notebook_real.py::test_the_demo_notebook")
    page = timings.page([suite], "2 cores")
    assert "| real | 3 | 1 failed, 2 passed, 17 deselected | 508.5 s |" in page
    assert "Machine: 2 cores." in page


def test_output_without_a_summary_line_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run.log").write_text("no tests ran\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="no pytest summary line"):
        timings.read_suite("x", tmp_path / "run.log")


def test_the_page_is_the_one_the_docs_link_to() -> None:
    assert timings.OUTPUT.is_file()
    assert timings.OUTPUT.read_text(encoding="utf-8").startswith("# Test timings\n")
