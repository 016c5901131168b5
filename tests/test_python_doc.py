"""docs/python.md's examples, run: every ```python block of the page, in order, in one
namespace, in a folder holding examples/demo.jsonl and demo-labels.jsonl, with the fake
backend's judge and embedder named by models.toml ($LOCALEVAL_MODELS). A block that
raises fails the test with the block's first line, so the page cannot drift from the
library."""

from __future__ import annotations

import re
import shutil
import traceback
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "python.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
FAKE_MODELS = '[judges."j"]\nbackend = "fake"\n[embedders."e"]\nbackend = "fake"\n'


def blocks() -> list[str]:
    return BLOCK.findall(PAGE.read_text("utf-8"))


def test_the_page_has_examples() -> None:
    assert len(blocks()) >= 2


def test_every_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").mkdir()
    for name in ("demo.jsonl", "demo-labels.jsonl"):
        shutil.copy(ROOT / "examples" / name, tmp_path / "examples" / name)
    models = tmp_path / "models.toml"
    models.write_text(FAKE_MODELS, encoding="utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    monkeypatch.delenv("LOCALEVAL_DB", raising=False)
    # the user's cache folder (context states, speeds) is the test's: the page clears it
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "python_doc"}
    for number, code in enumerate(blocks(), 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(compile(code, f"docs/python.md block {number}", "exec"), namespace)
            except Exception:
                first = code.strip().splitlines()[0]
                pytest.fail(f"block {number} ({first!r}) raised:\n{traceback.format_exc()}")
