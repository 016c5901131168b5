"""The architecture holds: no import cycle, and no layer imports a layer above it.

Read from the source (every import statement, at module level or inside a function, and
every import written as a string: `importlib.import_module("localeval.api")`), not from
what happens to be imported at run time. Run this file alone to print the layers
and each one's imports: `python tests/test_architecture.py`.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "localeval"

#: lowest first; a unit may import only units listed before it (and its own modules)
LAYERS: list[tuple[str, ...]] = [
    ("localeval.version", "localeval.errors", "localeval.extensions"),
    (
        "localeval.stats",
        "localeval.prediction_powered",
        "localeval.sequences",
        "localeval.text",
        "localeval.schema",
        "localeval.verdict_maps",
        "localeval.offline",
        "localeval.closing",
    ),
    ("localeval.judge",),
    ("localeval.embedder",),
    ("localeval.data",),
    ("localeval.prompts",),
    ("localeval.metrics",),
    ("localeval.backends",),
    ("localeval.config",),
    ("localeval.results",),
    ("localeval.engine",),
    ("localeval.database",),
    # the run history in the store, and the labels of its runs
    ("localeval.history",),
    ("localeval.labels",),
    ("localeval.tools",),
    ("localeval.estimate",),
    # whether this install can evaluate here (`localeval doctor`)
    ("localeval.doctor",),
    # side by side: each uses models through localeval.tools, none the others' modules
    ("localeval.evaluation", "localeval.pairwise", "localeval.testset"),
    ("localeval.calibration",),
    ("localeval.reports",),
    ("localeval.review",),
    ("localeval.api",),
    # the package root: its version, and the Python API's names on first use
    ("localeval",),
    ("localeval.testing",),
    ("localeval.pytest_plugin",),
    ("localeval.cli",),
    # `python -m localeval`: only starts the command line
    ("localeval.__main__",),
]


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its __init__)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


#: the calls that import a module named by a string
STRING_IMPORTS = ("importlib.import_module", "import_module", "__import__")


def string_import(node: ast.AST) -> str | None:
    """The module a call imports by a literal name (`import_module("localeval.api")`), if
    the node is one; a name built at run time (a plugin's, a metric's module) is not read."""
    if not isinstance(node, ast.Call) or ast.unparse(node.func) not in STRING_IMPORTS:
        return None
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def imports(path: Path, name: str, known: dict[str, Path]) -> Iterator[str]:
    """The localeval modules a module imports, anywhere in it, by statement or by a string."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (by_string := string_import(node)) is not None:
            targets = [by_string]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [
                        *package.split(".")[: len(package.split(".")) - node.level + 1],
                        *([base] if base else []),
                    ]
                )
            # `from package import module` imports the module
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imports(path, name, known)) for name, path in known.items()}


def unit_of(module: str) -> str:
    units = [u for layer in LAYERS for u in layer]
    # the package root is a unit of its own (above the API), not the home of every module
    matches = [u for u in units if module == u or (u != "localeval" and module.startswith(u + "."))]
    if not matches:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")
    return max(matches, key=len)


def rank(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


#: imports of a layer above made on purpose, each with its reason (none today)
DECLARED_UPWARD: list[str] = []


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    """Imports of a unit from a unit in the same or a higher layer."""
    wrong = []
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            a, b = unit_of(module), unit_of(target)
            if a != b and rank(b) >= rank(a):
                wrong.append(f"{module} -> {target}")
    return wrong


#: what tells one store from another, which only localeval/database/ may name, so that a
#: new store touches that package alone (docs/architecture.md, "Adding a store")
STORE_MODULES = ("localeval.database.sqlite", "localeval.database.postgres")
STORE_LOCATIONS = ("ServerUrl",)


def store_choices_outside_database(edges: dict[str, set[str]]) -> list[str]:
    """Modules outside localeval.database that import a store's module or name a kind of
    location (rather than asking database/: open_store, store_file, ...)."""
    wrong = []
    for module, path in sorted(modules().items()):
        if unit_of(module) == "localeval.database":
            continue
        wrong += [f"{module} -> {t}" for t in sorted(edges[module]) if t in STORE_MODULES]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.id if isinstance(node, ast.Name) else getattr(node, "name", None)
            name = node.attr if isinstance(node, ast.Attribute) else name
            if name in STORE_LOCATIONS:
                wrong.append(f"{module} names {name} (line {node.lineno})")  # type: ignore[attr-defined]
    return wrong


def exit_codes_outside_cli() -> list[str]:
    """Where a module outside localeval.cli exits (sys.exit, os._exit, raise SystemExit)
    or names an exit code: only the CLI chooses them (cli/exit_codes.py)."""
    wrong = []
    for module, path in sorted(modules().items()):
        if unit_of(module) == "localeval.cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            line = getattr(node, "lineno", 0)
            called = ast.unparse(node) if isinstance(node, ast.Attribute) else ""
            if called in ("sys.exit", "os._exit"):
                wrong.append(f"{module} calls {called} (line {line})")
            if isinstance(node, ast.Raise) and "SystemExit" in ast.unparse(node.exc or node):
                wrong.append(f"{module} raises SystemExit (line {line})")
            name = node.id if isinstance(node, ast.Name) else getattr(node, "name", None)
            name = node.attr if isinstance(node, ast.Attribute) else name
            name = node.arg if isinstance(node, ast.arg | ast.keyword) else name
            if isinstance(name, str) and ("exit_code" in name.lower() or "EXIT_" in name):
                wrong.append(f"{module} names {name} (line {line})")
    return wrong


#: the one room that imports Ray, and only inside the functions that need it, when a run
#: asks for a cluster (`localeval --help` and a run without --ray never import it)
RAY_ROOM = "localeval.evaluation.ray"


def ray_imports() -> list[str]:
    """Imports of Ray outside its room, or at module level inside it."""
    wrong = []
    for module, path in sorted(modules().items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_room = module == RAY_ROOM or module.startswith(RAY_ROOM + ".")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            if not any(name == "ray" or name.startswith("ray.") for name in names):
                continue
            if not in_room:
                wrong.append(f"{module} imports Ray (line {node.lineno})")
            elif node in tree.body:
                wrong.append(f"{module} imports Ray on import (line {node.lineno})")
    return wrong


#: the parts metrics are built of: a sub-package of localeval.metrics (one layer with
#: them), which imports no metric module, so that metrics build on parts and never the
#: other way (docs/architecture.md, "metrics/")
METRIC_PARTS = "localeval.metrics.parts"
#: the modules of localeval.metrics that are no metric: its terms and its plugins' loader
METRIC_TERMS = ("localeval.metrics", "localeval.metrics.base", "localeval.metrics.plugins")


def metric_imports_in_parts(edges: dict[str, set[str]]) -> list[str]:
    """Imports of a metric module (any of localeval.metrics outside its parts and terms)
    by a part."""
    return [
        f"{module} -> {target}"
        for module, targets in sorted(edges.items())
        if module.startswith(METRIC_PARTS)
        for target in sorted(targets)
        if target.startswith("localeval.metrics.")
        and not target.startswith(METRIC_PARTS)
        and target not in METRIC_TERMS
    ]


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_no_layer_imports_one_above_it() -> None:
    assert upward_imports(graph()) == DECLARED_UPWARD


def test_an_import_written_as_a_string_is_read(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import importlib\n"
        "def f(name):\n"
        "    importlib.import_module('localeval.api')\n"
        "    __import__('localeval.errors')\n"
        "    importlib.import_module(f'localeval.metrics.{name}')\n",
        encoding="utf-8",
    )
    found = set(imports(module, "localeval.stats", modules()))
    assert found == {"localeval.api", "localeval.errors"}


def test_only_the_database_package_tells_one_store_from_another() -> None:
    assert store_choices_outside_database(graph()) == []


def test_only_the_command_line_chooses_exit_codes() -> None:
    assert exit_codes_outside_cli() == []


def test_metric_parts_import_no_metric() -> None:
    assert metric_imports_in_parts(graph()) == []


def test_ray_is_imported_only_in_its_room_and_only_when_asked_for() -> None:
    assert ray_imports() == []


def test_every_module_belongs_to_a_layer() -> None:
    for module in graph():
        unit_of(module)


if __name__ == "__main__":
    edges = graph()
    for layer in LAYERS:
        for unit in layer:
            used = sorted(
                {unit_of(t) for m, ts in edges.items() if unit_of(m) == unit for t in ts} - {unit}
            )
            print(f"{unit:<24} -> {', '.join(used) or '-'}")
    print("cycles:", cycles(edges) or "none")
    print("upward imports:", upward_imports(edges) or "none")
    print("metrics imported by their parts:", metric_imports_in_parts(edges) or "none")


#: what the command line may import besides itself: the public API (its index, its modules
#: and their light option defaults, localeval.api.defaults), the typed errors, the text
#: renderers it shares with the library (localeval.reports and plurals in localeval.text),
#: the version, the entry-point groups commands are found through, and the process's offline
#: switches, which only a program's entry sets
CLI_MAY_IMPORT = (
    "localeval.api",
    "localeval.errors",
    "localeval.reports",
    "localeval.text",
    "localeval.version",
    "localeval.extensions",
    "localeval.offline",
    "localeval.cli",
)


def test_the_command_line_imports_only_the_public_api() -> None:
    """Every command is a client of the library (docs/python.md): anything else it needs,
    the API returns or re-exports."""
    wrong = [
        f"{module} -> {target}"
        for module, targets in sorted(graph().items())
        if module.startswith("localeval.cli")
        for target in sorted(targets)
        if not any(target == ok or target.startswith(ok + ".") for ok in CLI_MAY_IMPORT)
    ]
    assert wrong == []


def test_every_name_of_the_api_index_is_in_the_module_it_names() -> None:
    """localeval.api imports each public name from the module its index names, on first use
    (an import the layer test cannot read): a wrong entry would fail only when used."""
    import importlib

    from localeval import api

    wrong = [
        f"{name}: localeval.api.{module}"
        for name, module in sorted(api.NAMES.items())
        if not hasattr(importlib.import_module(f"localeval.api.{module}"), name)
    ]
    assert wrong == [] and sorted(api.__all__) == sorted(api.NAMES)
