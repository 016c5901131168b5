"""What labels that carry over cost on a big history: a run whose every faithfulness
verdict was labelled, and a later run of the same samples that reads them
(localeval.labels.carried) for its corrected mean. Each sample's verdicts are read
once per run, without the sentence each statement rests on (a reviewer's pointer, and
most of the cost). LOCALEVAL_BIG=10000 gives docs/measurements/judge-quality.md's figure."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from review_runs import demo_copies, evaluate
from standins import StandIns

from localeval.history.store import open_history
from localeval.labels import carried as carrying
from localeval.labels.corrected import stored_corrected
from localeval.labels.review_items import load_review_run
from localeval.labels.store import LabelStore
from localeval.results import person_values, verdicts
from localeval.results.person_values import RANDOM

#: samples of the run (the demo's eight, over and over)
BIG = int(os.environ.get("LOCALEVAL_BIG", "2000"))


def counted(calls: Counter[str], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return function(*args, **kwargs)

    return call


def test_labels_of_a_big_run_carry_over_reading_each_sample_once(
    stand_ins: StandIns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = demo_copies(tmp_path, BIG)
    started = time.monotonic()
    evaluate(stand_ins, data, "-m", "faithfulness")
    evaluated = time.monotonic() - started
    first = load_review_run("latest")
    made = [
        replace(
            first.label_for(s["sample_id"], v.metric, v.index, "right", "ann"), selection=RANDOM
        )
        for s in first.samples
        for v in first.verdicts[s["sample_id"]]
    ]
    with LabelStore.open(first.db) as store:
        store.add(first.run.id, made)
    evaluate(stand_ins, data, "-m", "faithfulness", "--no-resume")
    later = load_review_run("latest")
    calls: Counter[str] = Counter()
    monkeypatch.setattr(verdicts, "rests_on", counted(calls, "rests_on", verdicts.rests_on))
    for module in (carrying, person_values):
        read = counted(calls, module.__name__, verdicts.sample_verdicts)
        monkeypatch.setattr(module, "sample_verdicts", read)
    with open_history(later.db) as history:
        run = history.get(later.run.id)
        cpu, wall = time.process_time(), time.monotonic()
        carried = carrying.carried_labels(history, run, later.samples)
        carry = (time.process_time() - cpu, time.monotonic() - wall)
        columns = history.score_columns(run)
        cpu, wall = time.process_time(), time.monotonic()
        corrected = stored_corrected(history, run, columns)
        summary = (time.process_time() - cpu, time.monotonic() - wall)
    entry = corrected.overall["faithfulness"]
    assert len(carried) == len(made)
    assert entry.estimate is not None and entry.n_labelled == BIG
    # each run's samples read once by each reader (this run's, the labelled run's), twice
    # for the summary, which carries the labels over again; no sentence looked for
    assert calls == {carrying.__name__: 4 * BIG, person_values.__name__: BIG}
    print(
        f"\n{BIG} samples, {len(made)} labels: evaluate {evaluated:.1f} s; carry-over "
        f"{carry[0]:.2f} s CPU ({carry[1]:.2f} s wall); corrected summary with it "
        f"{summary[0]:.2f} s CPU ({summary[1]:.2f} s wall)"
    )
