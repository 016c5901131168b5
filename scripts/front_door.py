"""How far the command line is a client of the library (issue 54's before/after figures).

    python scripts/front_door.py [--json]

Prints, from the source alone: the non-CLI localeval modules cli/ imports (and from how
many of the package's parts), the library calls each command module makes (call sites of
names imported from outside cli/), and the public API's names (`localeval.__all__`-like
index, localeval/api/__init__.py's NAMES).
"""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / "localeval" / "cli"


def _library_names(tree: ast.Module) -> tuple[dict[str, str], Counter[str]]:
    """Names bound to non-CLI localeval modules or their members, and each module's count."""
    names: dict[str, str] = {}
    modules: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("localeval") and not node.module.startswith("localeval.cli"):
                modules[node.module] += 1
                for alias in node.names:
                    names[alias.asname or alias.name] = node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("localeval") and not alias.name.startswith(
                    "localeval.cli"
                ):
                    modules[alias.name] += 1
                    names[(alias.asname or alias.name).split(".")[0]] = alias.name
    return names, modules


def _calls(tree: ast.Module, names: dict[str, str]) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            while isinstance(func, ast.Attribute):
                func = func.value
            if isinstance(func, ast.Name) and func.id in names:
                count += 1
    return count


def measure() -> dict[str, object]:
    imported: Counter[str] = Counter()
    calls: dict[str, int] = {}
    for path in sorted(CLI.glob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        names, modules = _library_names(tree)
        imported.update(modules)
        calls[path.stem] = _calls(tree, names)
    parts = {m.split(".")[1] if "." in m else "(root)" for m in imported}
    index = ast.parse((ROOT / "localeval" / "api" / "__init__.py").read_text("utf-8"))
    public: list[str] = []
    for node in ast.walk(index):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "NAMES":
            public = sorted(ast.literal_eval(node.value))  # type: ignore[arg-type]
    return {
        "modules_imported": dict(imported.most_common()),
        "n_modules": len(imported),
        "n_parts": len(parts),
        "library_calls_per_command_module": calls,
        "public_api": public,
    }


def main() -> None:
    figures = measure()
    if "--json" in sys.argv:
        print(json.dumps(figures, indent=2))
        return
    print(f"cli/ imports {figures['n_modules']} library modules from {figures['n_parts']} parts:")
    for module, n in figures["modules_imported"].items():  # type: ignore[union-attr]
        print(f"  {n:3d}  {module}")
    print("library call sites per command module:")
    for module, n in figures["library_calls_per_command_module"].items():  # type: ignore[union-attr]
        print(f"  {n:3d}  cli/{module}.py")
    print(f"public API ({len(figures['public_api'])}): {', '.join(figures['public_api'])}")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
