"""Know the cost before you run: `evaluate --estimate` counts what the run will do, without
doing it; `--max-minutes` / `--max-calls` stop a run resumable; the ETA starts from the
estimate.

The judge here is the fake one behind the cache (a backend registered as cacheable, so that
what the cache answers is exercised): its counter is a fresh fake, whose prompt tokens are
words. That the llama.cpp judge's counter counts what it evaluates is checked with a real
model in test_estimate_real.py.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from run_db import query

from localeval.backends import (
    register_embedder_backend,
    register_judge_backend,
    unregister_backend,
)
from localeval.backends.fake import (
    FakeEmbedderBackend,
    FakeJudgeBackend,
    FakeJudgeSettings,
    HashJudge,
)
from localeval.cli import main
from localeval.cli.progress import Progress
from localeval.database import Location, open_store
from localeval.estimate.counting import PeekedCache
from localeval.judge import JudgeSpeed, ModelIdentity
from localeval.schema import Array, Bool, Enum, Int, Object, Str, parse, typical_value
from localeval.tools.cache import CacheTables, JudgeEntry, VectorEntry

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"
BACKEND = "cached-fake"


class CachedFake(FakeJudgeBackend):
    """The fake judge as a cacheable backend, counting how often it is measured."""

    cacheable = True

    def __init__(self) -> None:
        self.measured = 0

    def identify(self, name: str, settings: FakeJudgeSettings) -> ModelIdentity:
        return ModelIdentity(name, {"sha256": HashJudge.sha256})

    def measure(self, name: str, settings: FakeJudgeSettings) -> JudgeSpeed:
        self.measured += 1
        return super().measure(name, settings)


@pytest.fixture
def backend() -> Iterator[CachedFake]:
    registered = CachedFake()
    register_judge_backend(BACKEND, registered)
    yield registered
    unregister_backend(BACKEND)


def models(tmp_path: Path, delay: float = 0.0) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(
        f'[judges.j]\nbackend = "{BACKEND}"\ndelay_s = {delay}\n[embedders.e]\nbackend = "fake"\n',
        encoding="utf-8",
    )
    return path


def evaluate(*args: Any) -> Result:
    return CliRunner().invoke(main, ["evaluate", *map(str, args)])


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


USAGE_KEYS = ("judge_calls", "cached_calls", "prompt_tokens", "generated_tokens")


def test_the_estimate_counts_what_the_run_does(tmp_path: Path, backend: CachedFake) -> None:
    toml = models(tmp_path)
    estimated = evaluate(DEMO, "--models", toml, "--estimate", "-o", tmp_path / "e.json")
    assert estimated.exit_code == 0, estimated.output
    ran = evaluate(DEMO, "--models", toml, "-o", tmp_path / "r.json", "--no-progress")
    assert ran.exit_code in (0, 1), ran.output
    estimate, run = read(tmp_path / "e.json")["estimate"], read(tmp_path / "r.json")["run"]
    assert {k: estimate["usage"][k] for k in USAGE_KEYS} == {k: run["usage"][k] for k in USAGE_KEYS}
    assert estimate["usage"]["judge_calls"] > 0 and estimate["n_samples"] == 8
    assert list(estimate["by_metric"]) == run["metrics"]
    for key in USAGE_KEYS:
        assert sum(m[key] for m in estimate["by_metric"].values()) == estimate["usage"][key]
    # the run cached every call: estimated again, all of them come from the cache
    again = evaluate(DEMO, "--models", toml, "--estimate", "-o", tmp_path / "e2.json")
    assert again.exit_code == 0, again.output
    second = read(tmp_path / "e2.json")["estimate"]
    cached = second["usage"]
    assert cached["judge_calls"] == 0
    assert cached["cached_calls"] == run["usage"]["judge_calls"] + run["usage"]["cached_calls"]
    assert second["by_metric"]["faithfulness"]["seconds"] == 0.0  # judged by the cache


@pytest.mark.parametrize(
    "metrics",
    [("answer_correctness",), ("answer_correctness", "answer_similarity"), ("answer_similarity",)],
)
def test_the_estimate_counts_answer_correctness_and_similarity(
    tmp_path: Path, backend: CachedFake, metrics: tuple[str, ...]
) -> None:
    """The metrics of issue 26 are counted as the run does them: answer correctness asks
    the judge (its statements both ways), answer similarity only the embedder."""
    toml = models(tmp_path)
    chosen = [arg for name in metrics for arg in ("-m", name)]
    estimated = evaluate(DEMO, "--models", toml, *chosen, "--estimate", "-o", tmp_path / "e.json")
    assert estimated.exit_code == 0, estimated.output
    ran = evaluate(DEMO, "--models", toml, *chosen, "-o", tmp_path / "r.json", "--no-progress")
    assert ran.exit_code in (0, 1), ran.output
    estimate, run = read(tmp_path / "e.json")["estimate"], read(tmp_path / "r.json")["run"]
    assert {k: estimate["usage"][k] for k in USAGE_KEYS} == {k: run["usage"][k] for k in USAGE_KEYS}
    assert list(estimate["by_metric"]) == run["metrics"]
    if "answer_correctness" in metrics:
        assert estimate["by_metric"]["answer_correctness"]["judge_calls"] > 0
        assert estimate["judge"] == "j"
    if "answer_similarity" in metrics:
        assert estimate["by_metric"]["answer_similarity"]["judge_calls"] == 0
        assert estimate["embedder"] == "e" and estimate["embedded_texts"] > 0
    else:
        assert estimate["embedder"] is None


class CachedFakeEmbedder(FakeEmbedderBackend):
    """The fake embedder as a cacheable backend, as sentence-transformers is."""

    cacheable = True


def test_the_estimate_embeds_beside_the_cached_vectors(tmp_path: Path, backend: CachedFake) -> None:
    """A sample whose reference the cache holds (a real run's 384-dimensional vector) and
    whose answer it does not: the counting embedder's vector must stack with the cached one."""
    register_embedder_backend("cached-fake-embedder", CachedFakeEmbedder())
    try:
        toml = tmp_path / "models.toml"
        toml.write_text(
            f'[judges.j]\nbackend = "{BACKEND}"\n[embedders.e]\n'
            'backend = "cached-fake-embedder"\ndimensions = 384\n',
            encoding="utf-8",
        )
        row = json.loads(DEMO.read_text(encoding="utf-8").splitlines()[0])
        first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
        first.write_text(json.dumps(row) + "\n", encoding="utf-8")
        second.write_text(json.dumps({**row, "answer": "Another answer."}) + "\n", "utf-8")
        ran = evaluate(first, "--models", toml, "-m", "answer_similarity", "--no-progress")
        assert ran.exit_code == 0, ran.output
        out = tmp_path / "e.json"
        args = ("--models", toml, "-m", "answer_similarity", "--estimate", "-o", out)
        estimated = evaluate(second, *args)
        assert estimated.exit_code == 0, estimated.output
        assert read(out)["estimate"]["embedded_texts"] == 1  # the reference came from the cache
    finally:
        unregister_backend("cached-fake-embedder")


@pytest.mark.both_stores
def test_the_estimate_writes_nothing_but_the_speed(
    tmp_path: Path, backend: CachedFake, db: Location
) -> None:
    """Not the cache (the estimate's answers are no verdicts), nor a run, nor anything else
    in the database; the judge's and the embedder's speeds are kept in the user's cache
    folder, each measured once."""
    toml = models(tmp_path)
    for _ in range(2):
        result = evaluate(DEMO, "--models", toml, "--estimate")
        assert result.exit_code == 0, result.output
    assert backend.measured == 1
    for table in ("judge_cache", "embedding_cache", "runs", "run_samples", "model_speed"):
        assert query(db, f"SELECT COUNT(*) FROM {table}") == [(0,)], table
    kept = (tmp_path / "user-cache" / "localeval" / "speeds").glob("*.json")
    assert sorted(json.loads(path.read_text())["model"] for path in kept) == ["e", "j"]


def test_the_time_is_the_counted_work_at_the_measured_speed(
    tmp_path: Path, backend: CachedFake
) -> None:
    """The fake's speed is its delay a call: the estimate is the calls times the delay."""
    toml = models(tmp_path, delay=0.5)
    result = evaluate(DEMO, "--models", toml, "--estimate", "-o", tmp_path / "e.json")
    assert result.exit_code == 0, result.output
    estimate = read(tmp_path / "e.json")["estimate"]
    calls = estimate["usage"]["judge_calls"]
    assert estimate["timed"] and estimate["judge_steps"] == calls
    # plus the fake embedder's time, a few milliseconds
    assert estimate["usage"]["seconds"] == pytest.approx(0.5 * calls, abs=0.05)
    faithfulness = estimate["by_metric"]["faithfulness"]
    assert faithfulness["seconds"] == pytest.approx(0.5 * faithfulness["judge_calls"])
    assert "total" in result.output and "nothing was evaluated" in result.output


def test_the_estimate_counts_repeated_prompts_as_the_cache_will(
    tmp_path: Path, backend: CachedFake
) -> None:
    """Two identical rows: the run asks the second's prompts from the cache it just
    filled, and the estimate counts them as cached too, although it writes no cache."""
    rows = tmp_path / "twice.jsonl"
    line = DEMO.read_text(encoding="utf-8").splitlines()[0]
    twin = json.loads(line) | {"sample_id": "twin"}
    rows.write_text(line + "\n" + json.dumps(twin) + "\n", encoding="utf-8")
    toml = models(tmp_path)
    assert evaluate(rows, "--models", toml, "--estimate", "-o", tmp_path / "e.json").exit_code == 0
    ran = evaluate(rows, "--models", toml, "-o", tmp_path / "r.json", "--no-progress")
    assert ran.exit_code in (0, 1), ran.output
    estimate, run = read(tmp_path / "e.json")["estimate"], read(tmp_path / "r.json")["run"]
    assert estimate["usage"]["cached_calls"] == run["usage"]["cached_calls"] > 0
    assert estimate["usage"]["judge_calls"] == run["usage"]["judge_calls"]


def test_without_the_cache_every_call_is_counted(tmp_path: Path, backend: CachedFake) -> None:
    toml = models(tmp_path)
    assert evaluate(DEMO, "--models", toml, "--no-progress").exit_code in (0, 1)
    result = evaluate(DEMO, "--models", toml, "--estimate", "--no-cache", "-o", tmp_path / "e.json")
    assert result.exit_code == 0, result.output
    usage = read(tmp_path / "e.json")["estimate"]["usage"]
    assert usage["cached_calls"] == 0 and usage["judge_calls"] > 0


def test_a_judge_that_cannot_count_is_said(tmp_path: Path, stand_ins: Any) -> None:
    stand_ins.use(HashJudge(), None)
    result = evaluate(DEMO, "--estimate", "-m", "faithfulness")
    assert result.exit_code == 2
    assert "Error: judge 'qwen2.5-coder-1.5b': its backend cannot estimate a run" in result.output


def test_compare_answers_estimate_counts_what_it_judges(
    tmp_path: Path, backend: CachedFake
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"question": "Who?", "contexts": ["Ada wrote it."], "answer_a": "Ada.", "answer_b": "Bo."},
        {"question": "When?", "answer_a": "In 1843.", "answer_b": "Later."},
    ]
    pairs.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    toml = models(tmp_path)
    runner = CliRunner()
    estimated = runner.invoke(
        main,
        [
            "compare-answers",
            str(pairs),
            "--models",
            str(toml),
            "--estimate",
            "-o",
            str(tmp_path / "e.json"),
        ],
    )
    assert estimated.exit_code == 0, estimated.output
    compared = runner.invoke(main, ["compare-answers", str(pairs), "--models", str(toml)])
    assert compared.exit_code == 0, compared.output
    estimate = read(tmp_path / "e.json")["estimate"]
    assert estimate["n_pairs"] == 2
    calls, cached = estimate["usage"]["judge_calls"], estimate["usage"]["cached_calls"]
    assert f"judge: {calls} calls ({cached} from cache)" in compared.output


def test_max_calls_stops_the_run_resumable(
    tmp_path: Path, backend: CachedFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = models(tmp_path)
    argv = ["localeval", "evaluate", str(DEMO), "--models", str(toml), "--max-calls", "3"]
    monkeypatch.setattr(sys, "argv", argv)
    stopped = evaluate(DEMO, "--models", toml, "--max-calls", 3, "--no-progress")
    assert stopped.exit_code == 124, stopped.output
    assert "is saved with 1 of 8 samples scored" in stopped.output
    assert (
        "Stopped: --max-calls 3 is spent: 1 samples scored in 0.0 minutes with " in stopped.output
    )
    assert f"To go on: localeval evaluate {DEMO} --models {toml} --max-calls 3" in stopped.output
    went_on = evaluate(DEMO, "--models", toml, "--no-progress", "-o", tmp_path / "r.json")
    assert went_on.exit_code in (0, 1), went_on.output
    assert "Resuming run" in went_on.output and "1 of 8 samples were scored" in went_on.output
    assert len(read(tmp_path / "r.json")["samples"]) == 8


def test_max_minutes_stops_after_the_sample_that_spends_them(
    tmp_path: Path, backend: CachedFake
) -> None:
    toml = models(tmp_path, delay=0.01)
    stopped = evaluate(DEMO, "--models", toml, "--max-minutes", 0.0001, "--no-progress")
    assert stopped.exit_code == 124, stopped.output
    assert "Stopped: --max-minutes 0.0001 is spent: 1 samples scored" in stopped.output


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--max-calls", "0", "Error: --max-calls must be more than 0, got 0"),
        ("--max-minutes", "-1", "Error: --max-minutes must be more than 0, got -1"),
    ],
)
def test_a_budget_must_be_positive(option: str, value: str, message: str) -> None:
    result = evaluate(DEMO, option, value)
    assert result.exit_code == 2 and message in result.output


def test_an_estimate_has_no_budget() -> None:
    result = evaluate(DEMO, "--estimate", "--max-calls", "5")
    assert result.exit_code == 2
    assert (
        "Error: --estimate evaluates nothing: --max-minutes and --max-calls do not apply"
        in result.output
    )


def test_the_time_left_starts_from_the_estimate() -> None:
    stream = io.StringIO()
    progress = Progress(4, "Evaluating", stream=stream, expected=40.0)
    assert progress.left(0.0) == 40.0  # before any item: the estimate itself
    progress.advance(expected=10.0)
    # the first item took twice its estimate: the rest is expected to as well
    assert progress.left(20.0) == pytest.approx(60.0)
    assert Progress(4, "Evaluating", stream=stream).left(0.0) is None  # no guess yet


@pytest.mark.both_stores
def test_a_peeked_cache_reads_the_cache_and_keeps_its_own_writes(db: Location) -> None:
    store = open_store(db)
    CacheTables(store).keep_answer(JudgeEntry("stored", "s", "yes_probability", "0.5", 1, 0))
    peeking = PeekedCache(open_store(db))
    peeking.keep_answer(JudgeEntry("peeked", "s", "yes_probability", "0.25", 1, 0))
    assert (peeking.answer("stored"), peeking.answer("peeked")) == ("0.5", "0.25")
    vector = np.arange(3, dtype="<f4")
    peeking.keep_vector(VectorEntry("v", "e", vector.tobytes()))
    assert peeking.dimensions("e") == 3 and peeking.vector("v") == vector.tobytes()
    assert query(db, "SELECT key FROM judge_cache") == [("stored",)]
    assert query(db, "SELECT count(*) FROM embedding_cache") == [(0,)]
    store.close()


def test_a_typical_value_fits_its_schema() -> None:
    schema = Object(
        (
            ("questions", Array(Str(10), 3, 3)),
            ("kind", Enum(("a", "b"))),
            ("n", Int(2, 5)),
            ("ok", Bool()),
            ("fact", Str(50, min_chars=8)),
        )
    )
    value: Mapping[str, Any] = typical_value(schema, "word word word")
    assert parse(schema, json.dumps(value)) == value
    assert value["questions"] == ["word word "] * 3 and value["fact"] == "word word word"


def test_a_server_judge_is_estimated_request_by_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counter sends no completion: it counts the requests the run sends, and the
    prompt tokens of each as the server's tokenizer counts them; the speed comes from a
    few timed requests, once."""
    from server_fakes import FakeServer, models_toml

    toml = tmp_path / "server.toml"
    metrics = ["-m", "faithfulness", "-m", "rubric", "-m", "answer_relevancy"]
    with FakeServer() as fake:
        toml.write_text(models_toml(fake.url), encoding="utf-8")
        estimated = evaluate(DEMO, "--models", toml, *metrics, "--estimate", "-o", tmp_path / "e")
        assert estimated.exit_code == 0, estimated.output
        timing = len(fake.completions())
        again = evaluate(DEMO, "--models", toml, *metrics, "--estimate")
        assert again.exit_code == 0 and len(fake.completions()) == timing  # measured once
        fake.requests.clear()
        ran = evaluate(DEMO, "--models", toml, *metrics, "-o", tmp_path / "r", "--no-progress")
        assert ran.exit_code in (0, 1), ran.output
        sent = fake.completions()
    estimate, run = read(tmp_path / "e")["estimate"], read(tmp_path / "r")["run"]
    assert 0 < timing <= 3
    assert estimate["usage"]["judge_calls"] == run["usage"]["judge_calls"]
    assert estimate["judge_steps"] == len(sent)
    # (this fake reports a quarter of what its tokenizer counts; a real server does not)
    assert estimate["usage"]["prompt_tokens"] == sum(len(body["prompt"]) for body in sent)
    assert estimate["timed"] and estimate["usage"]["seconds"] > 0


def test_claims_are_counted_per_metric_and_written_once_for_every_later_run(
    tmp_path: Path, backend: CachedFake
) -> None:
    """Issue 36: the reference's claims are generated tokens the estimate counts under
    answer correctness; a later run, or other answers to the same references, find them in
    the cache and generate nothing."""
    toml = models(tmp_path)
    chosen = ["-m", "answer_correctness", "--answer-correctness-statements", "reference-claims"]
    sentences = ["-m", "answer_correctness", "--answer-correctness-statements", "sentences"]
    plain = evaluate(DEMO, "--models", toml, *sentences, "--estimate", "-o", tmp_path / "s.json")
    assert plain.exit_code == 0, plain.output
    assert read(tmp_path / "s.json")["estimate"]["usage"]["generated_tokens"] == 0
    cold = evaluate(DEMO, "--models", toml, *chosen, "--estimate", "-o", tmp_path / "e.json")
    assert cold.exit_code == 0, cold.output
    by_metric = read(tmp_path / "e.json")["estimate"]["by_metric"]["answer_correctness"]
    assert by_metric["generated_tokens"] > 0
    assert "generated" in cold.output  # the table's column, per metric
    ran = evaluate(DEMO, "--models", toml, *chosen, "-o", tmp_path / "r.json", "--no-progress")
    assert ran.exit_code in (0, 1), ran.output
    assert read(tmp_path / "r.json")["run"]["usage"]["generated_tokens"] > 0
    # other answers to the same references: verdicts to ask, no claims to write
    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]
    other = tmp_path / "other.jsonl"
    other.write_text(
        "".join(json.dumps({**row, "answer": f"Not sure. {row['answer']}"}) + "\n" for row in rows),
        encoding="utf-8",
    )
    warm = evaluate(other, "--models", toml, *chosen, "-o", tmp_path / "w.json", "--no-progress")
    assert warm.exit_code in (0, 1), warm.output
    usage = read(tmp_path / "w.json")["run"]["usage"]
    assert usage["judge_calls"] > 0 and usage["generated_tokens"] == 0
