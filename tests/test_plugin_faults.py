"""A metric plugin that misbehaves: its exception, or its sys.exit, is an error naming the
metric and the sample (never a silent exit 0), the run kept to continue; a score outside
[0, 1], NaN or infinity, or details that are not plain JSON are undefined for the sample
with the reason, never stored as they are; Ctrl-C still stops the run as anywhere else.

The plugins are installed as a user's are found: a distribution's entry points of the group
`localeval.metrics` (its .dist-info on the path of a `localeval` process of its own)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest

from localeval.cli.options import Terminated
from localeval.data.samples import Sample
from localeval.engine import checked_result, score_metric
from localeval.metrics.base import MetricResult

ROOT = Path(__file__).resolve().parent.parent

PLUGIN = '''\
import math
import os
import sys
import time
from pathlib import Path

from localeval.metrics.base import MetricResult, MetricSpec


def _spec(name, score):
    """A metric of no model that scores each sample with `score`."""
    kind = type(name, (), {"name": name, "needs": ("answer",), "uses_judge": False,
                           "uses_embedder": False, "score": lambda self, s, tools: score(s)})
    return MetricSpec(kind, help=f"a faulty plugin: {name}", gate=0.5)


def _on_second(then):
    def score(sample):
        return then() if sample.sample_id == "s2" else MetricResult(1.0, {})
    return score


def _fails():
    raise ValueError("no policy table")


def _waits():
    Path(os.environ["FAULTS_WAITING"]).write_text("scoring s2")
    time.sleep(60)


EXITS = _spec("exits", _on_second(lambda: sys.exit(0)))
FAILS = _spec("fails", _on_second(_fails))
WAITS = _spec("waits", _on_second(_waits))
TOO_HIGH = _spec("too_high", lambda s: MetricResult(2.0 if s.sample_id == "s1" else 0.8, {}))
INFINITE = _spec("infinite", lambda s: MetricResult(math.inf if s.sample_id == "s2" else 0.7))
NAN_DETAILS = _spec("nan_details", lambda s: MetricResult(0.9, {"ratio": math.nan}))
'''
NAMES = ("exits", "fails", "waits", "too_high", "infinite", "nan_details")
ROWS = [{"sample_id": f"s{i}", "question": f"Q{i}?", "answer": f"It is {i}."} for i in (1, 2, 3)]


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that, on the path, installs the faulty plugins."""
    folder = tmp_path_factory.mktemp("faulty-plugins")
    (folder / "acme_faults.py").write_text(PLUGIN, encoding="utf-8")
    info = folder / "acme_faults-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-faults\nVersion: 0.1\n")
    entries = "".join(f"{n} = acme_faults:{n.upper()}\n" for n in NAMES)
    (info / "entry_points.txt").write_text(f"[localeval.metrics]\n{entries}", encoding="utf-8")
    return folder


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def environment(plugins: Path, tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{plugins}"}
    env["LOCALEVAL_DB"] = str(tmp_path / "localeval.db")
    env.pop("LOCALEVAL_DEBUG", None)
    return env


def localeval(plugins: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "localeval.cli", *args]
    env = environment(plugins, tmp_path)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def run_ids(plugins: Path, tmp_path: Path) -> list[str]:
    listed = localeval(plugins, tmp_path, "runs", "list").stdout.splitlines()[1:]
    return [line.split()[0] for line in listed]


@pytest.mark.parametrize(
    ("metric", "said"),
    [
        ("exits", "it called sys.exit(0)"),
        ("fails", "ValueError: no policy table"),
    ],
)
def test_a_plugin_that_raises_or_exits_is_an_error_naming_it_and_the_sample(
    plugins: Path, tmp_path: Path, data: Path, metric: str, said: str
) -> None:
    out = tmp_path / "results.json"
    result = localeval(plugins, tmp_path, "evaluate", str(data), "-m", metric, "-o", str(out))
    (run_id,) = run_ids(plugins, tmp_path)
    assert (result.returncode, result.stderr) == (
        3,
        f"Loaded 3 samples from {data}; metrics: {metric}\n"
        f"Run {run_id} is saved with 1 of 3 samples scored; re-run the same command to "
        "continue it.\n"
        f"Error: metric plugin '{metric}' failed on sample 's2': {said} (set "
        "LOCALEVAL_DEBUG=1 for the traceback)\n",
    )
    assert result.stdout == "" and not out.exists()


def test_the_plugins_traceback_is_shown_when_debugging(
    plugins: Path, tmp_path: Path, data: Path
) -> None:
    env = {**environment(plugins, tmp_path), "LOCALEVAL_DEBUG": "1"}
    command = [sys.executable, "-m", "localeval.cli", "evaluate", str(data), "-m", "fails"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 3
    assert 'acme_faults.py", line ' in result.stderr
    assert "ValueError: no policy table\n" in result.stderr


def test_ctrl_c_in_a_plugin_still_stops_the_run(plugins: Path, tmp_path: Path, data: Path) -> None:
    waiting = tmp_path / "waiting"
    env = {**environment(plugins, tmp_path), "FAULTS_WAITING": str(waiting)}
    command = [sys.executable, "-m", "localeval.cli", "evaluate", str(data), "-m", "waits"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    # Ctrl-C once the plugin is inside score() for s2 (it says so in the file), never sooner
    deadline = time.monotonic() + 600  # a bound on a failure, not a window to act in
    while not waiting.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the plugin never started scoring s2"
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=600)
    (run_id,) = run_ids(plugins, tmp_path)
    assert (process.returncode, stderr.splitlines()[-2:]) == (
        130,
        [
            f"Run {run_id} is saved with 1 of 3 samples scored; re-run the same command to "
            "continue it.",
            "Interrupted.",
        ],
    )


class Interrupted:
    """A plugin's metric (not localeval's module) inside whose score() the signal lands."""

    name = "waits"
    needs = ("answer",)
    uses_judge = uses_embedder = False

    def __init__(self, signal: type[KeyboardInterrupt]):
        self.signal = signal

    def score(self, sample: Sample, tools: Any) -> MetricResult:
        raise self.signal()


@pytest.mark.parametrize("stop", [KeyboardInterrupt, Terminated])
def test_ctrl_c_inside_a_plugins_score_is_neither_its_failure_nor_undefined(
    stop: type[KeyboardInterrupt],
) -> None:
    """Ctrl-C (or SIGTERM) inside score() stops the run: never MetricFailed, never an
    undefined score."""
    with pytest.raises(stop) as raised:
        score_metric(Sample("s2", "Q2?", answer="It is 2."), Interrupted(stop), cast(Any, None))
    assert type(raised.value) is stop


def test_a_plugins_impossible_result_is_undefined_with_the_reason(
    plugins: Path, tmp_path: Path, data: Path
) -> None:
    out = tmp_path / "results.json"
    metrics = ["-m", "too_high", "-m", "infinite", "-m", "nan_details"]
    result = localeval(plugins, tmp_path, "evaluate", str(data), *metrics, "-o", str(out))
    assert result.returncode == 1, result.stderr  # nan_details scored no sample: its gate fails
    samples = {s["sample_id"]: s for s in json.loads(out.read_text())["samples"]}
    assert [samples[k]["scores"]["too_high"] for k in ("s1", "s2", "s3")] == [None, 0.8, 0.8]
    assert [samples[k]["scores"]["infinite"] for k in ("s1", "s2", "s3")] == [0.7, None, 0.7]
    assert {s["scores"]["nan_details"] for s in samples.values()} == {None}
    assert samples["s1"]["details"]["too_high"] == {
        "undefined_reason": "the metric gave the score 2.0, which is not a number from 0 to 1"
    }
    assert samples["s2"]["details"]["infinite"] == {
        "undefined_reason": "the metric gave the score inf, which is not a number from 0 to 1"
    }
    assert samples["s3"]["details"]["nan_details"] == {
        "undefined_reason": "the metric's details hold NaN or infinity, not JSON"
    }
    # the run reads back everywhere a run is read
    report = localeval(plugins, tmp_path, "report", "latest", "-f", "md")
    assert report.returncode == 0, report.stderr
    again = localeval(plugins, tmp_path, "evaluate", str(data), *metrics, "--baseline", "latest")
    assert again.returncode == 1 and "Regression gate" in again.stdout, again.stderr
    diff = localeval(plugins, tmp_path, "diff", "latest~1", "latest")
    assert diff.returncode == 0, diff.stderr


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        (0.5, "the metric returned float, not a result"),
        (MetricResult(-0.1), "the metric gave the score -0.1, which is not a number from 0 to 1"),
        (MetricResult(True), "the metric gave the score True, which is not a number from 0 to 1"),
        (MetricResult(float("nan")), "the metric gave the score nan, which is not a number "
         "from 0 to 1"),
        (MetricResult("0.5"), "the metric gave the score '0.5', which is not a number from 0 "
         "to 1"),
        (MetricResult(0.5, {"seen": {1, 2}}), "the metric's details are not plain JSON (Object "
         "of type set is not JSON serializable)"),
        (MetricResult(0.5, [1]), "the metric's details are not a dict"),  # type: ignore[arg-type]
    ],
)  # fmt: skip
def test_what_a_run_cannot_hold_is_undefined(result: object, reason: str) -> None:
    assert checked_result(result) == MetricResult.undefined(reason)


def test_a_good_result_enters_the_run_as_it_is() -> None:
    assert checked_result(MetricResult(1, {"n": 2})) == MetricResult(1.0, {"n": 2})
    assert checked_result(MetricResult.undefined("no answer")) == MetricResult(
        None, {}, "no answer"
    )


def test_calibrate_scoring_with_a_plugin_checks_it_as_a_run_does(
    plugins: Path, tmp_path: Path
) -> None:
    """`calibrate --score-with PLUGIN` goes through the same checks: a score of 2.0 is
    undefined (it counted as a score), sys.exit is an error naming the plugin and the row's
    sample (it ended calibrate with exit 0 and nothing written)."""
    rows = [
        {"sample_id": f"s{i}", "metric": "too_high", "question": f"Q{i}?", "answer": f"It is {i}."}
        | {"label": i % 2}
        for i in (1, 2, 3)
    ]
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    base = ("calibrate", str(data), "--no-cache", "--no-progress", "--score-with")
    out = tmp_path / "calibration.json"
    result = localeval(plugins, tmp_path, *base, "too_high", "-o", str(out))
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())
    assert [row["score"] for row in figures["rows"]] == [None, 0.8, 0.8]
    exits = localeval(plugins, tmp_path, *base, "exits")
    assert exits.returncode == 3
    assert exits.stderr.endswith(
        "Error: metric plugin 'exits' failed on sample 's2': it called sys.exit(0) (set "
        "LOCALEVAL_DEBUG=1 for the traceback)\n"
    )
