"""docs/reference.md against the code it names: the data table against the fields and the
metrics' needs, the metric table against the registry's built-in metrics, the gate table
against each metric's gate, cause and remedies, the corrected table against the metrics
people's labels correct, results.json's fields against what a run writes, the exit
statuses against the errors and the command line."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path
from typing import Any

from fakes import FakeEmbedder, HashJudge
from standins import StandIns

import localeval
import localeval.errors
import localeval.metrics
from localeval.cli import exit_codes
from localeval.data import fields
from localeval.database import Location
from localeval.metrics.base import MetricSpec
from localeval.results import contract
from localeval.results.person_values import PERSON_VALUE

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference.md"
FULL_ROW = {
    "sample_id": "full",
    "category": "billing",
    "question": "When was the tower finished?",
    "contexts": ["The tower was finished in 1889.", "It is made of iron."],
    "answer": "It was finished in 1889.",
    "reference_answer": "The tower was finished in 1889.",
}
# no reference: context recall is undefined, so its gate fails for too few scores
NO_REFERENCE_ROW = {**FULL_ROW, "sample_id": "bare", "reference_answer": None}


def section(heading: str) -> str:
    """The text of reference.md's `## heading` section, up to the next one."""
    text = REFERENCE.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def table_column(text: str) -> list[str]:
    """The first cell of every row of the markdown tables in `text`, header rows left out."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    cells = [row.split("|")[1].strip() for row in rows]
    return [cell for cell, row in zip(cells, rows, strict=True) if not set(cell) <= {"-"}][1:]


def built_in_metrics() -> set[str]:
    """Every metric localeval itself ships (a module of localeval.metrics with a SPEC)."""
    names = set()
    for module in pkgutil.iter_modules(localeval.metrics.__path__):
        spec = getattr(importlib.import_module(f"localeval.metrics.{module.name}"), "SPEC", None)
        if isinstance(spec, MetricSpec):
            names.add(spec.name)
    return names


def test_the_data_table_names_every_field_and_every_ragas_name() -> None:
    text = section("The data: one sample per row")
    assert [cell.strip("`") for cell in table_column(text)] == list(fields.CANONICAL)
    ragas = re.search(r"Ragas' names are read as these: (.*?)\. ", text, re.DOTALL)
    assert ragas is not None
    pairs = re.findall(r"`(\w+)`(?:\s+and\s+`(\w+)`)?\s+\((\w+)\)", ragas.group(1))
    documented = {alias: field for *aliases, field in pairs for alias in aliases if alias}
    assert documented == fields.ALIASES


def test_the_metric_table_names_every_built_in_metric_and_no_other() -> None:
    documented = [cell.strip("`") for cell in table_column(section("The metrics"))]
    assert sorted(documented) == sorted(built_in_metrics())


def test_the_gate_table_holds_every_default_gate() -> None:
    rows = [line for line in section("Quality gates").splitlines() if line.startswith("| `")]
    documented = {}
    for row in rows:
        metric, gate = (cell.strip() for cell in row.split("|")[1:3])
        documented[metric.strip("`")] = float(gate.removeprefix("≥").strip())
    gates = {
        name: spec.gate
        for name in built_in_metrics()
        if (spec := localeval.metrics.spec(name)) and spec.gate is not None
    }
    assert documented == gates


def cells(text: str) -> list[list[str]]:
    """The cells of the rows of the markdown tables in `text` that name a metric or a field."""
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row.split("|")[1:-1]] for row in rows]


def plain(text: str) -> str:
    """Text as the code and the doc both may write it: an en dash as a hyphen."""
    return text.replace("–", "-")


def test_the_gate_table_says_what_each_failing_gate_says() -> None:
    for metric, _, cause, remedies in cells(section("Quality gates")):
        spec = localeval.metrics.spec(metric.strip("`"))
        assert spec is not None and spec.cause is not None
        assert plain(cause) == plain(spec.cause)
        assert plain(remedies) == plain("; ".join(spec.remedies))


def needs(metric: str) -> tuple[str, ...]:
    spec = localeval.metrics.spec(metric)
    assert spec is not None
    return tuple(spec.build.needs)


def test_the_data_table_names_the_metrics_that_need_each_field() -> None:
    for field, needed_by, _ in cells(section("The data: one sample per row")):
        if needed_by.startswith(("every row", "(optional)")):
            continue
        named = needed_by.split(" (")[0].split(", ")
        documented = {name.lower().replace(" ", "_").replace("-", "_") for name in named}
        needing = {name for name in built_in_metrics() if field.strip("`") in needs(name)}
        assert documented == needing, field


def test_the_corrected_table_names_every_metric_people_can_correct() -> None:
    documented = [row[0].strip("`") for row in cells(section("Corrected by people's labels"))]
    assert sorted(documented) == sorted(PERSON_VALUE)


def documented_example() -> dict[str, Any]:
    text = section("results.json")
    block = re.search(r"```json\n(.*?)```", text, re.DOTALL)
    assert block is not None
    example: dict[str, Any] = json.loads(block.group(1))
    return example


def documented_names(text: str) -> set[str]:
    """Every `name` the section's prose quotes."""
    return set(re.findall(r"`([a-z_0-9]+)`", text))


def written_run(tmp_path: Path, stand_ins: StandIns, db: Location) -> dict[str, Any]:
    """results.json of a fake judge's run of the default metrics on two samples, one that
    leaves context recall undefined, so a gate fails for too few scores."""
    stand_ins.use(HashJudge(), FakeEmbedder())
    data = tmp_path / "data.jsonl"
    rows = (FULL_ROW, NO_REFERENCE_ROW)
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    run = localeval.evaluate(data, min_defined=1.0, progress=False)
    return run.to_dict()


def keys_written_by(function: Any) -> set[str]:
    """Every string key `function` puts in a dict (a literal's or a subscript's)."""
    tree = ast.parse(inspect.getsource(function))
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys |= {k.value for k in node.keys if isinstance(k, ast.Constant)}
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.slice, ast.Constant)
        ):
            keys.add(node.slice.value)
    return keys


def test_results_json_fields_are_those_a_run_writes(
    tmp_path: Path, stand_ins: StandIns, db: Location
) -> None:
    example, written = documented_example(), written_run(tmp_path, stand_ins, db)
    prose = documented_names(section("results.json"))
    assert set(example) == set(written)
    assert set(example["run"]) == set(written["run"])
    # what run_object writes only sometimes (a shard's run) is named in the prose
    assert keys_written_by(contract.run_object) - set(written["run"]) <= prose
    assert set(example["run"]["usage"]) == set(written["run"]["usage"])
    documented = set(example["summary"]["faithfulness"])
    plain = {"mean", "n", "n_undefined", "ci95"}
    for summary in (written["summary"], *written["summary_by_category"].values()):
        for entry in summary.values():
            # the corrected estimate's keys come with the metrics people's labels can correct
            assert set(entry) in (documented, plain)
    assert "corrected" in written["summary"]["faithfulness"]
    passing, *few = sorted(written["gates"], key=len)
    assert set(passing) == set(example["gates"][0])
    assert few and set(few[0]) - set(passing) <= prose
    for sample in written["samples"]:
        assert set(sample) == set(example["samples"][0])
    # a shard's samples say their position, in the prose
    assert "position" in prose


def documented_statuses() -> set[int]:
    statuses = set()
    for cell in table_column(section("Exit status")):
        statuses |= {int(status) for status in cell.split(",")}
    return statuses


def test_the_exit_statuses_are_those_the_command_line_exits_with() -> None:
    chosen = {status for _, status in exit_codes.ERROR_STATUSES}
    constants = {value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")}
    assert documented_statuses() == chosen | constants
