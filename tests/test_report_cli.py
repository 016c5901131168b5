"""`localeval report`: formats, output, baseline, and clear errors for bad input."""

from __future__ import annotations

import gzip
import json
import stat
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import report_data
from click.testing import CliRunner
from standins import StandIns
from test_cli import ROW, good_answers, use_fakes

from localeval.cli import main


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(report_data.results(evil=True)), encoding="utf-8")
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["report", *args])


def test_html_to_a_file(results_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = invoke(str(results_file), "--output", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr == f"Report written to {out}\n"
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'class="chart radar"' in page
    # an ordinary file, readable by whoever may read the folder (not a private temp file)
    assert out.stat().st_mode & stat.S_IRGRP
    assert {p.name for p in tmp_path.iterdir()} == {"results.json", "report.html"}


def test_markdown_to_stdout(results_file: Path) -> None:
    result = invoke(str(results_file), "--format", "md", "--worst", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("### ❌ localeval: 1 of 4 quality gates failed\n")
    assert "<details><summary>1 worst samples</summary>" in result.stdout


def test_junit_with_samples(results_file: Path) -> None:
    result = invoke(str(results_file), "-f", "junit", "--junit-samples")
    assert result.exit_code == 0, result.output
    root = ET.fromstring(result.stdout.encode("utf-8"))
    assert [s.get("name") for s in root.findall("testsuite")] == [
        "localeval quality gates",
        "localeval samples",
    ]


def test_json_is_the_results_again(results_file: Path) -> None:
    result = invoke(str(results_file), "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == report_data.results(evil=True)


def test_baseline(results_file: Path, tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    base.write_text(json.dumps(report_data.baseline()), encoding="utf-8")
    result = invoke(str(results_file), "-f", "md", "--baseline", str(base))
    assert result.exit_code == 0, result.output
    assert "Baseline: run `20240525T120000-base00`." in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "line 1: not a localeval results file (invalid JSON: Expecting property name"),
        ('{"run": {}}', "not a localeval results file (no 'summary')"),
        ("[1, 2]", "not a localeval results file (the top level is not an object)"),
        (
            '{"run": {}, "summary": {}, "gates": [{"metric": "x"}], "samples": []}',
            "not a localeval results file (gate 0 lacks metric, threshold, value or passed)",
        ),
    ],
)
def test_not_a_results_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content, encoding="utf-8")
    result = invoke(str(path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}")
    assert message in result.stderr
    assert result.stderr.endswith("; write one with `localeval evaluate DATA --output FILE`\n")


def test_missing_results_file_and_bad_output(results_file: Path, tmp_path: Path) -> None:
    result = invoke(str(tmp_path / "nope.json"))
    assert result.exit_code == 2
    assert result.stderr == f"Error: '{tmp_path / 'nope.json'}': no such results file\n"
    result = invoke(str(results_file), "-o", str(tmp_path / "no" / "r.html"))
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: --output {tmp_path / 'no' / 'r.html'}: folder {tmp_path / 'no'} does not exist\n"
    )
    result = invoke(str(results_file), "-f", "pdf")
    assert result.exit_code == 2
    assert "Invalid value for '-f' / '--format': 'pdf' is not one of" in result.stderr


def test_paths_in_the_data_are_never_opened_or_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dataset path, sample ids and chunks name files; the report touches none of them."""
    target = tmp_path / "victim.txt"
    data = report_data.results(evil=True)
    data["run"]["dataset"] = str(target)
    data["samples"][0]["sample_id"] = str(target)
    data["samples"][0]["contexts"] = [str(target), "file://" + str(target)]
    results = tmp_path / "results.json"
    results.write_text(json.dumps(data), encoding="utf-8")
    opened: list[str] = []
    real_open = open

    def watching_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", watching_open)
    monkeypatch.setattr("io.open", watching_open)
    for fmt in ("html", "md", "junit", "json"):
        result = invoke(str(results), "-f", fmt, "-o", str(tmp_path / f"out.{fmt}"))
        assert result.exit_code == 0, result.output
    assert not target.exists()
    assert str(results) in opened  # the watch works: it saw the results file being read
    assert str(target) not in opened
    assert {p.name for p in tmp_path.iterdir()} == {
        "results.json",
        "out.html",
        "out.md",
        "out.junit",
        "out.json",
    }


def test_evaluate_then_report(stand_ins: StandIns, tmp_path: Path) -> None:
    """results.json keeps each sample's inputs, so the report shows them next to the evidence."""
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    use_fakes(stand_ins, good_answers())
    out = tmp_path / "results.json"
    assert CliRunner().invoke(main, ["evaluate", str(data), "-o", str(out)]).exit_code == 0
    (sample,) = json.loads(out.read_text())["samples"]
    assert sample["question"] == ROW["question"] and sample["contexts"] == ROW["contexts"]
    assert sample["answer"] == ROW["answer"]
    assert sample["reference_answer"] == ROW["reference_answer"]
    result = invoke(str(out))
    assert result.exit_code == 0, result.output
    assert "The tower was finished in 1889." in result.stdout
    assert "All 4 quality gates pass" in result.stdout


def test_a_gz_output_is_gzip_and_reads_back(results_file: Path, tmp_path: Path) -> None:
    """An output named .gz is gzip-compressed (it was plain text under a .gz name), and a
    results file so named is read back by `report` (and `diff`, which reads it the same way)."""
    packed = tmp_path / "again.json.gz"
    result = invoke(str(results_file), "-f", "json", "--output", str(packed))
    assert result.exit_code == 0, result.output
    assert json.loads(gzip.decompress(packed.read_bytes())) == report_data.results(evil=True)
    result = invoke(str(packed), "--format", "md", "--worst", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("### ❌ localeval: 1 of 4 quality gates failed\n")
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(packed.read_bytes()[:20])
    result = invoke(str(broken))
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {broken}: is not a complete gzip file (")
