"""The engine's InFlight scheduler on its own: results in dataset order whatever order the
samples finish in, a failure raised in its place, and a stop that drops the rest."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from localeval.data.samples import Sample
from localeval.engine import InFlight, Sequential, sample_tools, scheduler_for
from localeval.metrics import MetricResult, Tools
from localeval.results.model import SampleResult


def jobs(n: int) -> list[tuple[int, Sample]]:
    return [(i, Sample(f"s{i}", f"q{i}")) for i in range(n)]


def test_results_come_in_dataset_order_while_samples_finish_out_of_it() -> None:
    finished: list[str] = []
    lock = threading.Lock()

    def score(sample: Sample) -> SampleResult:
        time.sleep(0.03 if int(sample.sample_id[1:]) % 3 == 0 else 0.001)
        with lock:
            finished.append(sample.sample_id)
        return SampleResult(sample, {"m": MetricResult(1.0)})

    results = list(InFlight(4).run(jobs(12), score))
    assert [p for p, _ in results] == list(range(12))
    assert [r.sample.sample_id for _, r in results] == [f"s{i}" for i in range(12)]
    assert finished != sorted(finished, key=lambda s: int(s[1:]))  # they did overlap


def test_a_failing_sample_raises_in_its_place_and_stops_the_rest() -> None:
    started: list[int] = []
    stopped = threading.Event()

    def score(sample: Sample) -> SampleResult:
        number = int(sample.sample_id[1:])
        started.append(number)
        if number == 3:
            raise RuntimeError("server gone")
        time.sleep(0.01)
        return SampleResult(sample, {})

    got: list[int] = []
    with pytest.raises(RuntimeError, match="server gone"):
        for position, _ in InFlight(2, on_stop=stopped.set).run(jobs(50), score):
            got.append(position)
    assert got == [0, 1, 2]  # everything before it, nothing after
    assert stopped.is_set()
    time.sleep(0.1)
    assert max(started) < 10  # the samples not started were dropped


def test_only_a_judge_with_sessions_and_concurrency_gets_samples_in_flight() -> None:
    class Plain:
        concurrency = 4

    class Sessions(Plain):
        def session(self) -> Any:
            return Sessions()

    assert isinstance(scheduler_for(Tools()), Sequential)
    assert isinstance(scheduler_for(Tools(Plain())), Sequential)  # type: ignore[arg-type]
    assert isinstance(scheduler_for(Tools(Sessions())), InFlight)  # type: ignore[arg-type]
    tools = Tools(Sessions())  # type: ignore[arg-type]
    assert sample_tools(tools).judge is not tools.judge
    single = Tools(Plain())  # type: ignore[arg-type]
    assert sample_tools(single) is single
