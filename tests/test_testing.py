"""The pytest entry point: assert_rag_quality and the rag_quality fixture."""

from __future__ import annotations

import importlib
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeEmbedder, ScriptedJudge
from standins import StandIns, models_toml
from test_cli import QUESTION, ROW, good_answers

from localeval import metrics as metrics_module
from localeval import testing
from localeval.data.samples import Sample
from localeval.database import Database
from localeval.errors import ConfigError, DatasetError, UsageError
from localeval.metrics import MetricResult, MetricSpec, Tools
from localeval.testing import ModelCache, assert_rag_quality

ROOT = Path(__file__).resolve().parent.parent


def fakes(answers: list[Any]) -> Tools:
    return Tools(judge=ScriptedJudge(answers), embedder=FakeEmbedder())


def unfaithful_answers() -> list[Any]:
    # faithfulness (low), recall, relevancy: noncommittal, answers
    return [0.2, 0.9, 0.05, 0.97]


def test_passing_gates_return_the_run() -> None:
    tools = fakes(good_answers())
    quality = assert_rag_quality([ROW], tools=tools)
    assert quality.passed
    assert quality.mean("faithfulness") == pytest.approx(0.95)
    assert [g.metric for g in quality.gates] == [
        "context_precision",
        "faithfulness",
        "context_recall",
        "answer_relevancy",
    ]
    assert quality.results()["samples"][0]["sample_id"] == "q1"
    assert isinstance(tools.judge, ScriptedJudge)
    tools.judge.assert_done()


def test_failing_gate_message_names_gate_remedies_and_samples() -> None:
    with pytest.raises(AssertionError) as failure:
        assert_rag_quality([ROW], tools=fakes(unfaithful_answers()))
    assert str(failure.value) == (
        "RAG quality gates failed: 1 of 4 on the samples given (1 sample)\n"
        "  FAIL faithfulness = 0.200, below the threshold 0.80. Likely cause: the generator "
        'invents beyond the retrieved context. Try: a stricter system prompt ("answer only '
        "from the context, else say you don't know\"); temperature 0-0.1; require citations "
        "of the context.\n"
        "  passed: context_precision = 1.000 >= 0.65; context_recall = 0.900 >= 0.70; "
        "answer_relevancy = 0.970 >= 0.75\n"
        "  worst samples:\n"
        "    q1: faithfulness 0.200 - unsupported: It was finished in 1889."
    )


def test_thresholds_replace_the_defaults(tmp_path: Path) -> None:
    data = tmp_path / "rag.jsonl"
    data.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    with pytest.raises(AssertionError, match=r"failed: 1 of 1 on .*rag.jsonl \(1 sample\)"):
        assert_rag_quality(
            data,
            thresholds={"faithfulness": 0.99},
            metrics=["faithfulness"],
            tools=fakes([0.95]),
        )
    quality = assert_rag_quality(
        str(data), thresholds={"faithfulness": 0.9}, metrics=["faithfulness"], tools=fakes([0.95])
    )
    assert quality.run.info.dataset == str(data)


@pytest.mark.parametrize(
    ("thresholds", "message"),
    [
        ({"faithfulnes": 0.9}, "thresholds: unknown metric 'faithfulnes' (known: "),
        (
            {"context_recall": 0.9},
            "thresholds: 'context_recall' is not among the metrics evaluated (faithfulness)",
        ),
        ({"faithfulness": 1.5}, "thresholds: 'faithfulness' must be a number between 0 and 1"),
        ({"faithfulness": True}, "thresholds: 'faithfulness' must be a number between 0 and 1"),
    ],
)
def test_bad_thresholds(thresholds: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as error:
        assert_rag_quality([ROW], thresholds, ["faithfulness"], tools=fakes([]))
    assert str(error.value).startswith(message)


class LengthMetric:
    """A metric without a default gate: the answer's length, capped at 1."""

    name = "answer_length"
    needs = ("answer",)
    uses_judge = False
    uses_embedder = False

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        return MetricResult(min(1.0, len(sample.answer or "") / 100), {})


def test_a_check_that_could_never_fail_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(metrics_module.REGISTRY, "answer_length", MetricSpec(LengthMetric))
    with pytest.raises(UsageError, match="no quality gate applies to answer_length: give "):
        assert_rag_quality([ROW], metrics=["answer_length"], tools=Tools())
    quality = assert_rag_quality([ROW], {"answer_length": 0.2}, ["answer_length"], tools=Tools())
    assert quality.mean("answer_length") == pytest.approx(0.24)


def test_the_judges_own_thresholds_apply_when_it_is_loaded_from_models_toml(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    models = tmp_path / "models.toml"
    models.write_text(models_toml("faithfulness = 0.15"))
    stand_ins.use(ScriptedJudge(unfaithful_answers()), FakeEmbedder())
    quality = assert_rag_quality([ROW], models=models, use_cache=False)
    assert {g.metric: g.threshold for g in quality.gates}["faithfulness"] == 0.15
    # test doubles given as `tools` have no models.toml entry: the default gates
    with pytest.raises(AssertionError, match=r"below the threshold 0\.80"):
        assert_rag_quality([ROW], tools=fakes(unfaithful_answers()), models=models)


def test_samples_given_in_code() -> None:
    sample = Sample("s1", QUESTION, ["The tower was finished in 1889."], "In 1889.")
    assert assert_rag_quality([sample], metrics=["faithfulness"], tools=fakes([0.9])).passed
    with pytest.raises(DatasetError, match="<samples>, line 2: duplicate sample_id 'q1'"):
        assert_rag_quality([ROW, ROW], metrics=["faithfulness"], tools=fakes([]))
    with pytest.raises(DatasetError, match="<samples>, line 1, field 'question': missing"):
        assert_rag_quality([{"answer": "x"}], metrics=["faithfulness"], tools=fakes([]))
    with pytest.raises(DatasetError, match="<samples>: holds no samples"):
        assert_rag_quality([], metrics=["faithfulness"], tools=fakes([]))
    with pytest.raises(UsageError, match="not a single sample"):
        assert_rag_quality(ROW, metrics=["faithfulness"], tools=fakes([]))  # type: ignore[arg-type]


def test_model_cache_loads_each_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[list[str], bool]] = []

    def fake_load_tools(
        models: Any, metrics: list[Any], judge: Any, embedder: Any, cache: Any = None
    ) -> Tools:
        calls.append(([m.name for m in metrics], isinstance(cache, Database)))
        tools = Tools()
        if any(m.uses_judge for m in metrics):
            tools.judge = ScriptedJudge()
        if any(m.uses_embedder for m in metrics):
            tools.embedder = FakeEmbedder()
        return tools

    monkeypatch.setattr(testing, "load_tools", fake_load_tools)
    cache = ModelCache()
    models = ROOT / "models.toml"
    first = cache.tools(["faithfulness"], models=models)
    assert first.judge is not None and first.embedder is None
    second = cache.tools(["faithfulness", "context_precision"], models=models)
    assert second.judge is first.judge and second.embedder is not None
    # context precision embeds English samples' chunks and has the judge read Chinese ones
    third = cache.tools(["context_precision"], models=models)
    assert third.judge is second.judge and third.embedder is second.embedder
    # only what was missing was asked for, behind the persistent cache
    assert calls == [(["faithfulness"], True), (["context_precision"], True)]
    cache.close()
    uncached = ModelCache(use_cache=False)
    uncached.tools(["context_recall"], models=models)
    assert calls[-1] == (["context_recall"], False)
    with pytest.raises(ConfigError, match=r"no-such\.toml: models file not found"):
        uncached.tools(["faithfulness"], models=ROOT / "no-such.toml")


PLUGIN_CONFTEST = """
from fakes import FakeEmbedder, ScriptedJudge
import pytest
from localeval.metrics import Tools
from localeval.testing import ModelCache

QUESTION = "When was the tower finished?"

class FakeModels(ModelCache):
    def __init__(self):
        super().__init__()
        self.judge = ScriptedJudge([0.95, 0.9, 0.05, 0.97, 0.2, 0.9, 0.05, 0.97])
        self.calls = 0

    def tools(self, metrics, judge=None, embedder=None, models=None):
        self.calls += 1
        return Tools(judge=self.judge, embedder=FakeEmbedder())

@pytest.fixture(scope="session")
def localeval_model_cache():
    return FakeModels()
"""

PLUGIN_TESTS = """
def test_good(rag_quality):
    quality = rag_quality("rag.jsonl")
    assert quality.passed

def test_unfaithful(rag_quality, localeval_model_cache):
    rag_quality("rag.jsonl", thresholds={"faithfulness": 0.85})
"""


def test_fixture_in_a_project_test_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # load the plugin explicitly, once, whether or not this checkout is pip-installed
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest(PLUGIN_CONFTEST)
    pytester.makepyfile(test_project=PLUGIN_TESTS)
    (pytester.path / "rag.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    result = pytester.runpytest("-p", "localeval.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert "RAG quality gates failed: 1 of 4 on rag.jsonl (1 sample)" in output
    assert "FAIL faithfulness = 0.200, below the threshold 0.85. Likely cause:" in output
    # the failure points at the project's test line, not into localeval
    assert 'rag_quality("rag.jsonl", thresholds={"faithfulness": 0.85})' in output
    assert "def assert_rag_quality" not in output


def test_plugin_is_registered_for_pytest() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    module = project["entry-points"]["pytest11"]["localeval"]
    plugin = importlib.import_module(module)
    assert callable(plugin.rag_quality) and callable(plugin.localeval_model_cache)
