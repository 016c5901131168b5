"""Metrics from outside the package: entry points of the group `localeval.metrics`, each
checked with one clear line for what is wrong, and the worked example of
examples/metric-plugin/ installed into a throwaway environment and run through
`localeval evaluate -m`: gates, reports, `diff` and the cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.cli import main
from localeval.metrics import PLUGIN_PROBLEMS, REGISTRY
from localeval.metrics.base import MetricOption, MetricSpec
from localeval.metrics.bleu import Bleu
from localeval.metrics.plugins import PLUGIN_GROUP, load_plugins

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "metric-plugin"


def entry(name: str, value: str) -> EntryPoint:
    return EntryPoint(name, value, PLUGIN_GROUP)


def test_a_plugin_module_or_its_spec_is_a_metric() -> None:
    plugins = load_plugins(set(), [entry("bleu", "localeval.metrics.bleu")])
    assert [s.name for s in plugins.specs] == ["bleu"] and plugins.problems == {}
    plugins = load_plugins(set(), [entry("rouge_l", "localeval.metrics.rouge:SPEC")])
    assert [s.name for s in plugins.specs] == ["rouge_l"] and plugins.problems == {}


@pytest.mark.parametrize(
    ("name", "value", "built_in", "problem"),
    [
        ("broken", "no_such_module_of_localeval", set(),
         "metric plugin 'broken' (no_such_module_of_localeval) failed to import: "
         "ModuleNotFoundError: No module named 'no_such_module_of_localeval'"),
        ("plain", "json", set(),
         "metric plugin 'plain' (json) defines no SPEC (a localeval.metrics.base.MetricSpec)"),
        ("faithfulness", "localeval.metrics.faithfulness", {"faithfulness"},
         "metric plugin 'faithfulness' (localeval.metrics.faithfulness) is named like the "
         "built-in metric 'faithfulness'; rename it"),
        ("overlap", "localeval.metrics.bleu", set(),
         "metric plugin 'overlap' (localeval.metrics.bleu) declares the metric 'bleu': name "
         "the entry point after it"),
        ("faithfulness", "localeval.metrics.faithfulness", set(),
         "metric plugin 'faithfulness' (localeval.metrics.faithfulness) asks for a place in "
         "the default set (default_rank): a plugin's metric runs when named with -m"),
        # an option not named after the metric could take evaluate's or another's
        ("answer_correctness", "localeval.metrics.answer_correctness", set(),
         "metric plugin 'answer_correctness' (localeval.metrics.answer_correctness) has the "
         "option --ac-beta (beta): a plugin's options are named after its metric, "
         "--answer-correctness-... (answer_correctness_...)"),
    ],
)  # fmt: skip
def test_a_plugin_that_cannot_be_used_is_left_out_with_one_line(
    name: str, value: str, built_in: set[str], problem: str
) -> None:
    plugins = load_plugins(built_in, [entry(name, value)])
    assert plugins.specs == [] and plugins.problems == {name: problem}


class Tone(Bleu):
    name = "tone"


#: a plugin metric whose options are named after it, as they must be
TONE = MetricSpec(
    Tone, help="a test plugin", options=(MetricOption("--tone-words", "tone_words", "words"),)
)


def test_a_plugins_options_named_after_its_metric_are_taken() -> None:
    plugins = load_plugins(set(), [entry("tone", f"{__name__}:TONE")])
    assert plugins.problems == {} and [s.name for s in plugins.specs] == ["tone"]


def test_a_metric_two_plugins_declare_is_left_out() -> None:
    twice = [entry("bleu", "localeval.metrics.bleu"), entry("bleu", "other.bleu")]
    plugins = load_plugins(set(), twice)
    assert plugins.specs == []
    assert plugins.problems == {
        "bleu": "metric plugin 'bleu' is declared by more than one entry point "
        "(localeval.metrics.bleu, other.bleu); uninstall all but one"
    }


def test_the_command_line_warns_of_a_broken_plugin_and_stops_when_it_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    problem = "metric plugin 'acme' (acme.check) failed to import: ImportError: no"
    monkeypatch.setitem(PLUGIN_PROBLEMS, "acme", problem)
    data = tmp_path / "d.jsonl"
    data.write_text('{"sample_id": "a", "question": "q", "answer": "a"}\n', encoding="utf-8")
    listed = CliRunner().invoke(main, ["runs", "list"])
    assert listed.exit_code == 0 and listed.stderr == f"Warning: {problem}\n"
    asked = CliRunner().invoke(main, ["evaluate", str(data), "-m", "acme", "--no-progress"])
    assert asked.exit_code == 2
    assert asked.stderr == f"Warning: {problem}\nError: {problem}\n"


# -- the worked example, installed ---------------------------------------------------------

#: `localeval` with a judge behind the cache: the hash judge of the "fake" backend, made
#: cacheable as a model file's judge is (the fake's own answers are never cached)
DRIVER = """\
from localeval.backends import register_judge_backend
from localeval.backends.fake import FakeJudgeBackend
from localeval.cli import main


class CachedFake(FakeJudgeBackend):
    cacheable = True


register_judge_backend("cached-fake", CachedFake())
main(prog_name="localeval")
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A throwaway environment over the project's, with the example installed into it as
    a user would (offline, from a copy: the build leaves files beside the source). A venv
    made from the project's venv sees only the base interpreter's packages, so a .pth file
    adds the project venv's: localeval's dependencies, and setuptools for the build."""
    folder = tmp_path_factory.mktemp("plugin-env")
    env = folder / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env)],
        check=True,
    )
    python = env / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    own = subprocess.run(
        [sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(site, "project-venv.pth").write_text(own + "\n", encoding="utf-8")
    source = shutil.copytree(EXAMPLE, folder / "metric-plugin")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-build-isolation", "--no-index", str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    (folder / "driver.py").write_text(DRIVER, encoding="utf-8")
    yield folder


def localeval(installed: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`localeval ARGS` in the environment with the plugin (this worktree's localeval)."""
    models = tmp_path / "models.toml"
    models.write_text('[judges.j]\nbackend = "cached-fake"\n', encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LOCALEVAL_MODELS": str(models),
        "LOCALEVAL_DB": str(tmp_path / "localeval.db"),
    }
    python, driver = installed / "venv" / "bin" / "python", installed / "driver.py"
    return subprocess.run(
        [str(python), str(driver), *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_the_installed_example_runs_with_gates_reports_diff_and_the_cache(
    installed: Path, tmp_path: Path
) -> None:
    assert "policy_ids" not in REGISTRY  # not installed here: only in the throwaway venv
    data = str(EXAMPLE / "samples.jsonl")
    metrics = ["-m", "policy_ids", "-m", "plain_language"]
    shown = localeval(installed, tmp_path, "evaluate", "--help")
    assert "policy_ids" in shown.stdout and "plain_language" in shown.stdout, shown.stderr

    out = tmp_path / "first.json"
    first = localeval(installed, tmp_path, "evaluate", data, *metrics, "-o", str(out))
    assert first.returncode == 1, first.stderr  # claim-2 cites a policy the contexts lack
    assert (
        "FAIL  policy_ids = 0.750, below the threshold 0.95. Likely cause: answers cite "
        "policy numbers that the retrieved documents do not hold." in first.stdout
    )
    results = json.loads(out.read_text(encoding="utf-8"))
    scores = {s["sample_id"]: s["scores"] for s in results["samples"]}
    assert [scores[k]["policy_ids"] for k in ("claim-1", "claim-2", "claim-3")] == [1.0, 0.5, None]
    assert all(0 <= s["plain_language"] <= 1 for s in scores.values())
    assert {g["metric"]: g["threshold"] for g in results["gates"]} == {
        "policy_ids": 0.95,
        "plain_language": 0.5,
    }
    # the plugin's own wording is a setting of the run; the judge's set is recorded too
    assert results["run"]["metric_settings"]["plain_language"] == {"wording": "plain-1"}
    assert results["run"]["usage"]["judge_calls"] == 3

    again = localeval(installed, tmp_path, "evaluate", data, *metrics)
    assert again.returncode == 1, again.stderr
    assert "judge: 0 calls (3 from cache)" in again.stdout  # the cache answered every call

    report = localeval(installed, tmp_path, "report", "latest", "--format", "md")
    assert report.returncode == 0, report.stderr
    # the gate's cause, and the sample that failed it with the plugin's own evidence
    assert (
        "- ❌ `policy_ids = 0.750, below the threshold 0.95`. Likely cause: answers cite"
        in report.stdout
    )
    worst = "`policy_ids` | 0.500 ❌ | cites a policy number the contexts do not hold: `POL-39999`"
    assert worst in report.stdout
    diff = localeval(installed, tmp_path, "diff", "latest~1", "latest")
    assert diff.returncode == 0, diff.stderr
    assert "policy_ids" in diff.stdout and "plain_language" in diff.stdout


#: what `localeval --help` and a pytest session (which imports the pytest11 plugin) import
#: of an installed plugin's package, then what asking the registry imports
IMPORTED = """\
import json, sys
from localeval.cli import main
try:
    main(["--help"], prog_name="localeval")
except SystemExit:
    pass
import localeval.pytest_plugin
print(json.dumps(sorted(m for m in sys.modules if m.startswith("acme_checks"))))
from localeval.metrics import REGISTRY
print(json.dumps(["policy_ids" in REGISTRY, "acme_checks.policy_ids" in sys.modules]))
"""


def test_help_and_the_pytest_plugin_import_no_metric_plugin(installed: Path) -> None:
    python = installed / "venv" / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [str(python), "-c", IMPORTED], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "evaluate" in done.stdout  # the help was shown
    assert json.loads(lines[-2]) == []  # nothing of the plugin's package
    assert json.loads(lines[-1]) == [True, True]  # found once the registry is asked
