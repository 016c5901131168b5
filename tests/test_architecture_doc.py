"""docs/architecture.md covers the package: every unit of tests/test_architecture.py's
layers in its table, every module of the rooms a newcomer looks for by file named (history,
labels, evaluation and its ray room, the estimate, the store, review), and the sections a
newcomer adds a metric, a backend, a store or a command by."""

from __future__ import annotations

import re
from pathlib import Path

from test_architecture import LAYERS

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
#: the rooms a newcomer looks for by file: every module of them is named
NAMED_BY_MODULE = [
    "history",
    "labels",
    "evaluation",
    "evaluation/ray",
    "estimate",
    "database",
    "review",
    "metrics/parts",
]


#: words that tell how the layout came to be rather than what it is
LAYOUT_HISTORY = re.compile(
    r"\bwhat was\b|\bused to\b|\bformerly\b|\b(?:was|were) (?:moved|split|renamed)\b"
    r"|\brenamed from\b|\bbefore \S+ existed\b|\bis what it was\b",
    re.IGNORECASE,
)


def table() -> str:
    return "\n".join(line for line in ARCHITECTURE.splitlines() if line.startswith("| `"))


def doc_name(unit: str) -> str:
    """How the table names a unit: `metrics/` for a package, `engine.py` for a module."""
    relative = unit.removeprefix("localeval").lstrip(".").replace(".", "/")
    return f"`{relative}/`" if (ROOT / "localeval" / relative).is_dir() else f"`{relative}.py`"


def test_the_table_names_every_package_and_module_of_the_layers() -> None:
    units = [unit for layer in LAYERS for unit in layer if unit != "localeval"]
    missing = [doc_name(unit) for unit in units if doc_name(unit) not in table()]
    assert missing == []


def test_every_module_of_the_store_labels_and_review_rooms_is_named() -> None:
    for package in NAMED_BY_MODULE:
        for path in sorted((ROOT / "localeval" / package).glob("*.py")):
            if path.name != "__init__.py":
                assert f"`{path.name}`" in ARCHITECTURE or f"/{path.name}`" in ARCHITECTURE, path


def test_it_describes_the_present_not_the_history_of_the_layout() -> None:
    assert LAYOUT_HISTORY.findall(ARCHITECTURE) == []
    assert LAYOUT_HISTORY.search("What was one `runs/` package is four rooms")


def test_the_how_to_sections_are_there() -> None:
    for what in ("a metric", "a judge or embedder backend", "a store", "a command"):
        assert f"\n## Adding {what}\n" in ARCHITECTURE


#: one module per command, per metric: named by the command and the metric, not by file
NAMED_BY_WHAT_IT_IS = {"cli", "metrics"}


def test_every_module_of_every_other_package_is_named() -> None:
    packages = [
        path.parent.name
        for path in sorted((ROOT / "localeval").glob("*/__init__.py"))
        if path.parent.name not in NAMED_BY_WHAT_IT_IS | set(NAMED_BY_MODULE)
    ]
    missing = [
        f"{package}/{path.name}"
        for package in packages
        for path in sorted((ROOT / "localeval" / package).glob("*.py"))
        if path.name != "__init__.py"
        and f"`{path.name}`" not in ARCHITECTURE
        and f"/{path.name}`" not in ARCHITECTURE
    ]
    assert missing == []


def test_the_metric_example_runs_as_written() -> None:
    from localeval.data.samples import Sample
    from localeval.metrics.base import MetricSpec, Tools

    section = ARCHITECTURE.split("\n## Adding a metric\n")[1]
    code = section.split("```python\n")[1].split("```")[0]
    namespace: dict[str, object] = {}
    exec(compile(code, "architecture.md", "exec"), namespace)
    spec = namespace["SPEC"]
    assert isinstance(spec, MetricSpec) and spec.name == "answer_length"
    metric = spec.build()
    sample = Sample("s", "Why?", answer="x" * 50)
    assert metric.score(sample, Tools()).score == 0.5
    assert metric.score(Sample("t", "Why?"), Tools()).score is None


def test_every_kind_of_location_has_its_store_in_the_one_registry() -> None:
    import typing

    from localeval.database import STORES, Location

    assert set(typing.get_args(Location)) == set(STORES)
    assert "`database.STORES`" in ARCHITECTURE.split("\n## Adding a store\n")[1]
