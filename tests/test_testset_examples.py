"""The README's test-set example on the committed files: examples/docs read as
docs/measurements/testset.md says, and examples/toy_rag.py filling a test set through
`localeval answer`."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from testset_fakes import json_lines

from localeval.cli import main
from localeval.testset.questions import read_corpus

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "examples" / "docs"
TOY = ROOT / "examples" / "toy_rag.py"


def test_the_english_manual_reads_as_measured_and_its_bad_files_are_skipped() -> None:
    corpus = read_corpus([DOCS / "en"])
    assert (len(corpus.documents), len(corpus.chunks)) == (11, 41)
    assert [(Path(s.path).name, s.reason) for s in corpus.skipped] == [
        ("empty.txt", "empty (no text)"),
        ("rack-diagram.txt", "binary data, not text"),
    ]
    assert {c.language for c in corpus.chunks} == {"en"}
    assert {c.category for c in corpus.chunks} == {"operations", "product"}


def test_the_chinese_manual_reads_as_measured_and_its_gb18030_file_is_skipped() -> None:
    corpus = read_corpus([DOCS / "zh"])
    assert (len(corpus.documents), len(corpus.chunks)) == (10, 38)
    assert [(Path(s.path).name, s.reason) for s in corpus.skipped] == [
        (
            "旧版说明.txt",
            "not UTF-8 text (byte 0xbe at offset 0); convert it, e.g. iconv -f GB18030 -t UTF-8",
        )
    ]
    assert {c.language for c in corpus.chunks} == {"zh"}
    assert {c.category for c in corpus.chunks} == {"业务", "设备"}


def test_the_readme_shows_the_toy_pipeline_it_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("```python\n")[1].split("```")[0]
    body = TOY.read_text(encoding="utf-8")
    assert body.endswith(shown)  # the file is the README's lines after its imports
    assert len([line for line in shown.splitlines() if line.strip()]) == 10


ROWS = [
    ("Which TCP port do backup agents use to reach the appliance?", "TCP port 7443."),
    ("电池的设计寿命是多少次充放电循环？", "800 次完整充放电循环。"),
]


@pytest.fixture
def testset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "testset.jsonl"
    rows = [
        {
            "sample_id": f"single_fact-{n}",
            "kind": "single_fact",
            "category": "operations",
            "question": question,
            "reference_answer": reference,
            "answer": "",
            "contexts": [],
            "reference_contexts": [],
            "source": [],
        }
        for n, (question, reference) in enumerate(ROWS)
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield path
    sys.modules.pop("toy_rag", None)


def test_the_toy_pipeline_answers_from_the_example_documents(testset: Path) -> None:
    out = testset.parent / "filled.jsonl"
    result = CliRunner().invoke(
        main, ["answer", str(testset), "--app", f"{TOY}:answer", "-o", str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Answered 2 questions with {TOY}:answer; ")
    assert result.stdout.endswith(f" s in the app. Written to {out}\n")
    english, chinese = json_lines(out)
    assert english["answer"] == "Backup agents reach the appliance on TCP port 7443."
    assert chinese["answer"] == (
        "电池的设计寿命为 800 次完整充放电循环，之后容量会降到原来的 80% 左右。"
    )
    assert [len(english["contexts"]), len(chinese["contexts"])] == [3, 3]
    assert english["contexts"][0].startswith(english["answer"])
    assert chinese["contexts"][0].startswith(chinese["answer"])
