"""`localeval generate --estimate`: what writing a test set will ask of the models, counted
by the writer's own code against counting stand-ins, as two bounds (every candidate
passing the judge's checks, every one failing them), and nothing written.

The real runs these are checked against use the writer fake (tests/testset_fakes.py), whose
answers always pass the cheap checks, so its candidates are decided by the judge's checks
only: with `support` 0.9 every one passes, with 0.1 every one fails the last check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fakes import FakeEmbedder
from testset_fakes import EN_TOPICS, CachedStandIn, WriterJudge, manual, write_docs

from localeval.backends import register_embedder_backend, register_judge_backend, unregister_backend
from localeval.backends.fake import HashJudge
from localeval.cli import main
from localeval.judge import JudgeSpeed

MODELS = """[judges.writer]
backend = "counted-writer"
[embedders.fake]
backend = "counted-embedder"
"""
FEWEST = "If every candidate passes the judge's checks (3 candidates, the fewest):"
MOST = "If every candidate fails them (up to 3 per question, the most):"


class CountedWriter(CachedStandIn):
    """The writer fake behind the cache, with a counter (a fresh hash fake, as the fake
    backend's) and a speed of 0.25 s a call, as a backend that can be estimated has."""

    def __init__(self, make: Callable[[], Any]) -> None:
        super().__init__(make)
        self.measured = 0

    def counter(self, name: str, settings: None) -> HashJudge:
        return HashJudge()

    def measure(self, name: str, settings: None) -> JudgeSpeed:
        self.measured += 1
        return JudgeSpeed(1e9, 0.25, 1e9)


@pytest.fixture
def writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """Registers the judge (made by the returned function's arguments) and the embedder."""
    backends: list[CountedWriter] = []

    def use(**judge: Any) -> CountedWriter:
        unregister_backend("counted-writer")
        backends.append(CountedWriter(lambda: WriterJudge(**judge)))
        register_judge_backend("counted-writer", backends[-1])
        return backends[-1]

    register_embedder_backend("counted-embedder", CachedStandIn(FakeEmbedder))
    models = tmp_path / "models.toml"
    models.write_text(MODELS, encoding="utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    yield use
    unregister_backend("counted-writer")
    unregister_backend("counted-embedder")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write_docs(tmp_path / "docs", {"manual.md": manual(EN_TOPICS)})


def generate(*args: Any) -> Result:
    return CliRunner().invoke(main, ["generate", *map(str, args), "--no-progress"])


def table_row(output: str, heading: str, label: str) -> list[str]:
    """The figures of a row of the table under `heading`."""
    section = output.split(heading, 1)[1]
    line = next(line for line in section.splitlines() if line.startswith(label))
    return line[len(label) :].split()


def calls(output: str, heading: str, label: str = "total") -> int:
    return int(table_row(output, heading, label)[0].replace(",", ""))


def test_the_estimate_writes_nothing_and_says_what_is_exact(
    docs: Path, tmp_path: Path, writer: Callable[..., CountedWriter]
) -> None:
    backend = writer()
    out = tmp_path / "testset.jsonl"
    result = generate(docs, "-n", "3", "--mix", "single_fact=1", "-o", out, "--estimate")
    assert result.exit_code == 0, result.output
    assert not out.exists() and backend.loaded == []  # no judge loaded: only counted
    assert backend.measured == 1
    lines = result.stdout.splitlines()
    assert lines[0] == FEWEST and MOST in lines
    for heading in (FEWEST, MOST):
        # the six chunks embedded, exactly; no judge call for them
        assert table_row(result.stdout, heading, "embedding the chunks")[:4] == ["0", "0", "0", "0"]
        assert calls(result.stdout, heading, "single_fact") == calls(result.stdout, heading)
    assert "two_chunk" not in result.stdout
    assert re.search(
        r"Embedder fake-embedder on this machine: \d+ texts/s \(\d+ to embed\)", result.stdout
    )
    assert result.stdout.rstrip().endswith(
        "Note: embedding the chunks is counted exactly; the judge's calls and prompt tokens are "
        "counted with its own code for the chunks a word-hashed stand-in of the embedder picks "
        "(the real one may pick others of other lengths), so they are estimates"
    )
    assert "nothing was evaluated" in result.stdout


def test_the_bounds_are_the_runs_where_every_candidate_passes_or_fails(
    docs: Path, tmp_path: Path, writer: Callable[..., CountedWriter]
) -> None:
    """The fewest calls are those of a run whose every candidate passes; the most those of
    a run whose every candidate fails the judge's support check (3 tried per question)."""
    writer()
    args = ("-n", "3", "--mix", "single_fact=1", "--no-cache")
    estimated = generate(docs, *args, "-o", tmp_path / "e.jsonl", "--estimate")
    assert estimated.exit_code == 0, estimated.output
    fewest, most = calls(estimated.stdout, FEWEST), calls(estimated.stdout, MOST)

    passing = writer()
    ran = generate(docs, *args, "-o", tmp_path / "pass.jsonl")
    assert ran.exit_code == 0, ran.output
    assert "Rejected 0 candidates" in ran.stdout
    assert passing.loaded[0].usage.judge_calls == fewest

    failing = writer(support=0.1)
    ran = generate(docs, *args, "-o", tmp_path / "fail.jsonl")
    assert ran.exit_code == 2 and "no question passed the checks (9 candidates" in ran.output
    assert failing.loaded[0].usage.judge_calls == most
    assert most == 3 * fewest


def test_the_estimate_counts_what_the_cache_holds(
    docs: Path, tmp_path: Path, writer: Callable[..., CountedWriter]
) -> None:
    """After a run, the candidates it judged come from the cache: the judge calls the
    estimate counts are fewer, and the cached ones are said."""
    writer()
    args = ("-n", "3", "--mix", "single_fact=1")
    before = generate(docs, *args, "-o", tmp_path / "e.jsonl", "--estimate")
    assert generate(docs, *args, "-o", tmp_path / "t.jsonl").exit_code == 0
    after = generate(docs, *args, "-o", tmp_path / "e.jsonl", "--estimate")
    assert after.exit_code == 0, after.output
    cached = int(table_row(after.stdout, FEWEST, "total")[1])
    assert cached > 0 and calls(after.stdout, FEWEST) < calls(before.stdout, FEWEST)
    assert re.search(r"embedding the chunks +0 +0 +0 +0 +0s", after.stdout)


def test_a_judge_that_cannot_count_is_said(docs: Path, tmp_path: Path, stand_ins: Any) -> None:
    stand_ins.use(WriterJudge(), FakeEmbedder())
    result = generate(docs, "-n", "2", "-o", tmp_path / "t.jsonl", "--estimate")
    assert result.exit_code == 2
    assert "Error: judge 'qwen2.5-coder-1.5b': its backend cannot estimate a run" in result.output
    assert not (tmp_path / "t.jsonl").exists()
