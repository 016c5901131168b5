"""No output disagrees with results.json on which mean a gate read (issue 52): evaluate's
summary, `runs show`, the HTML, Markdown and JUnit reports and the library's gate objects
each show the value the gate read, and say it was the mean corrected by people's labels
exactly where results.json says so; for a run gated on the judge's mean and one gated on
the corrected mean."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from corrected_runs import ENOUGH, METRICS, RUN_SIZE, labelled_run
from review_runs import run_cli
from standins import StandIns

from localeval.results.view import read_run

CORRECTED_WORDS = "corrected"


def gate_texts(stdout: str) -> dict[str, str]:
    """A summary's gate lines, by metric ("  PASS  faithfulness = ...")."""
    found = re.findall(r"^  (?:PASS|FAIL)  (\w+)( .*)$", stdout, re.M)
    return {metric: metric + rest for metric, rest in found}


def report_texts(kind: str, text: str, metrics: list[str]) -> dict[str, str]:
    """Each gate's text in a report: its list item (HTML), its summary row (Markdown), its
    test case (JUnit)."""
    if kind == "html":
        items = re.findall(r'<li><span class="badge[^>]*>.*?</li>', text, re.S)
        return {m: html.unescape(next(i for i in items if f">{m} =" in i)) for m in metrics}
    if kind == "md":
        return {
            m: next(r for r in text.splitlines() if r.startswith(f"| `{m}` |")) for m in metrics
        }
    cases = re.findall(
        r'<testcase classname="localeval.gates" name="(\w+)".*?</testcase>', text, re.S
    )
    blocks = re.findall(r'(<testcase classname="localeval.gates".*?</testcase>)', text, re.S)
    return {m: html.unescape(b) for m, b in zip(cases, blocks, strict=True)}


@pytest.mark.parametrize("gate_on", ["judge", "corrected"])
def test_every_output_says_the_mean_each_gate_read(
    stand_ins: StandIns, tmp_path: Path, gate_on: str
) -> None:
    labelled_run(stand_ins, tmp_path, ENOUGH, n_samples=RUN_SIZE)
    data = tmp_path / f"demo-{RUN_SIZE}.jsonl"
    out = tmp_path / "results.json"
    evaluated = run_cli(
        "evaluate", data, *METRICS, "--no-progress", "--no-resume", "-o", out, "--gate-on", gate_on
    )
    results = json.loads(out.read_text("utf-8"))
    gates = {g["metric"]: g for g in results["gates"]}
    assert {g.get("reads", "judge") for g in gates.values()} == {gate_on}
    metrics = list(gates)
    outputs = {
        "evaluate": gate_texts(evaluated.stdout),
        "runs show": gate_texts(run_cli("runs", "show", "latest").stdout),
        "library": {g.metric: g.line() for g in read_run(results).gates},
    }
    for kind in ("html", "md", "junit"):
        page = tmp_path / f"report.{kind}"
        assert run_cli("report", "latest", "--format", kind, "-o", page).exit_code == 0
        outputs[kind] = report_texts(kind, page.read_text("utf-8"), metrics)
    for where, texts in outputs.items():
        assert set(texts) == set(metrics), where
        for metric, text in texts.items():
            gate = gates[metric]
            assert f"{gate['value']:.3f}" in text, (where, text)
            said_corrected = CORRECTED_WORDS in text
            assert said_corrected == (gate.get("reads") == "corrected"), (where, text)
            if not gate["passed"]:
                continue
            assert "below the threshold" not in text, (where, text)
