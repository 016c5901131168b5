"""The demo notebook (examples/demo.ipynb) run headless, as a user runs it in Jupyter:
localeval.evaluate with the small SmolLM2 judge, tqdm's progress widget, the scores and
the evidence as tables, and the same call again answered from the cache."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.real_models

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
WIDGET = "application/vnd.jupyter.widget-view+json"


def outputs(cell: Any, kind: str) -> list[Any]:
    return [out for out in cell.outputs if out.output_type == kind]


def result(cell: Any, mime: str = "text/plain") -> str:
    (found,) = outputs(cell, "execute_result")
    return str(found.data[mime])


def test_the_demo_notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    notebook = nbformat.read(EXAMPLES / "demo.ipynb", as_version=4)
    (parameters,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    parameters.source = 'judge = "smollm2-135m"\nmetrics = ["context_recall"]'
    # the kernel inherits this test's environment: its own run history ($LOCALEVAL_DB)
    client = NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": EXAMPLES}}
    )
    client.execute()  # raises CellExecutionError, with the traceback, if a cell fails
    code = {c.source.splitlines()[0]: c for c in notebook.cells if c.cell_type == "code"}

    evaluated = code["import localeval"]
    assert result(evaluated).startswith("<Evaluation ")
    assert ": 8 samples, context_recall;" in result(evaluated)
    # the progress bar is tqdm's notebook widget, not text on stderr
    assert any(WIDGET in out.data for out in outputs(evaluated, "display_data"))
    assert not outputs(evaluated, "stream")

    summary = ast.literal_eval(result(code["run.summary"]))
    assert set(summary) == {"context_recall"}
    assert summary["context_recall"]["n"] + summary["context_recall"]["n_undefined"] == 8

    table = result(code["scores = run.to_pandas()"], "text/html")
    assert "billing-1" in table and "context_recall" in table
    evidence = result(code["evidence = run.evidence()"], "text/html")
    assert "<th>why</th>" in evidence

    usage = ast.literal_eval(
        result(code['again = localeval.evaluate("demo.jsonl", metrics, judge=judge, resume=False)'])
    )
    assert usage["judge_calls"] == 0 and usage["cached_calls"] > 0

    changes = ast.literal_eval(result(code["comparison = localeval.diff(run, again)"]))
    assert [(m, base) for m, base, _ in changes] == [(m, new) for m, _, new in changes]

    (printed,) = outputs(code['print(localeval.report(again, format="md"))'], "stream")
    assert "context_recall" in printed.text
