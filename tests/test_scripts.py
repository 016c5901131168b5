"""The measuring scripts stay in step with the prompts they count (they run real models, so
CI would otherwise only notice a broken one when someone measures)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

from script_modules import load_script

from localeval.data.samples import Sample

ROOT = Path(__file__).resolve().parent.parent


class WordTokenizer:
    """A stand-in judge whose tokens are words."""

    def _tokenize(self, text: str, special: bool) -> list[str]:
        return text.split()


def test_bench_counts_the_sample_and_each_instruction_once() -> None:
    bench = load_script("bench")
    sample = Sample(
        sample_id="s",
        question="two words",
        contexts=["three more words", "one"],
        answer="an answer",
        reference_answer="ref",
    )
    instructions = bench.own_tokens(WordTokenizer(), Sample(sample_id="e", question="x")) - 1
    assert instructions > 20  # the system message and the five instructions
    assert bench.own_tokens(WordTokenizer(), sample) == instructions + 2 + 3 + 1 + 2 + 1


def test_every_script_imports_what_the_library_has() -> None:
    """A script that names a module or a name the library no longer has (a rename) fails
    here, not on the day someone re-measures (the scripts run real models, so no test runs
    them whole)."""
    missing = []
    for script in sorted((ROOT / "scripts").glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level:
                continue
            name = node.module or ""
            if not name.startswith("localeval"):
                continue
            module = importlib.import_module(name)
            missing += [
                f"{script.name}: {name}.{alias.name}"
                for alias in node.names
                if not hasattr(module, alias.name)
                and importlib.util.find_spec(f"{name}.{alias.name}") is None
            ]
    assert missing == []
