"""The run history: what is stored, how runs are named, and what survives failures (on an
SQLite file and on a PostgreSQL database alike, where both can)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pytest
from fakes import FakeEmbedder, HashJudge

from localeval.data.samples import Sample
from localeval.database import Location
from localeval.engine import evaluate
from localeval.errors import UsageError
from localeval.evaluation.sources import header_of
from localeval.history.store import RunStore, StoredRun, fingerprint
from localeval.metrics import DEFAULT_METRICS, Tools
from localeval.results.contract import run_to_dict, write_results
from localeval.results.gates import DEFAULT_THRESHOLDS, evaluate_gates
from localeval.results.model import RunInfo, RunResult


def samples(n: int = 6) -> list[Sample]:
    return [
        Sample(
            sample_id=f"s{i}",
            question=f"What is fact {i}?",
            contexts=[f"Fact {i} is blue.", "Unrelated text."],
            answer=f"Fact {i} is blue. It is also round.",
            reference_answer=None if i == 2 else f"Fact {i} is blue.",
            category="odd" if i % 2 else None,
            line=i + 1,
        )
        for i in range(n)
    ]


def run_in_memory(data: list[Sample]) -> RunResult:
    run = evaluate(data, DEFAULT_METRICS, Tools(judge=HashJudge(), embedder=FakeEmbedder()))
    run.info.dataset, run.info.dataset_sha256 = "data.jsonl", "d" * 64
    return run


def store_run(store: RunStore, run: RunResult, complete: bool = True) -> StoredRun:
    stored = store.start(run.info, len(run.samples), DEFAULT_THRESHOLDS)
    for position, result in enumerate(run.samples):
        store.record_sample(stored.id, position, result)
    if complete:
        stored = store.complete(stored.id, evaluate_gates(run.summary(), DEFAULT_THRESHOLDS))
    return stored


def without_seconds(data: dict) -> dict:
    data = json.loads(json.dumps(data))
    del data["run"]["usage"]["seconds"]
    return data


@pytest.mark.both_stores
def test_stored_run_reads_back_as_the_in_memory_results(db: Location, tmp_path: Path) -> None:
    run = run_in_memory(samples())
    store = RunStore.open(db)
    stored = store_run(store, run)
    expected = run_to_dict(run, evaluate_gates(run.summary(), DEFAULT_THRESHOLDS))
    actual = {**header_of(store, stored), "samples": list(store.sample_dicts(stored))}
    assert without_seconds(actual) == without_seconds(expected)
    assert actual["samples"][2]["details"]["context_recall"] == {
        "undefined_reason": "no reference_answer"
    }
    assert actual["run"]["metric_settings"] == {
        "context_precision": {"usefulness": "en=embedder zh=judge"},
        "faithfulness": {},
        "context_recall": {},
        "answer_relevancy": {"n_questions": 0},
    }

    # results.json streamed from the database is byte for byte what json.dump would write
    out = tmp_path / "results.json"
    write_results(out, header_of(store, stored), store.sample_dicts(stored))
    whole = json.dumps(actual, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    assert out.read_text(encoding="utf-8") == whole


@pytest.mark.both_stores
def test_runs_are_named_by_id_prefix_and_latest(db: Location) -> None:
    store = RunStore.open(db)
    first = store_run(store, run_in_memory(samples()))
    second = store_run(store, run_in_memory(samples()))
    unfinished = store_run(store, run_in_memory(samples()), complete=False)
    assert store.resolve("latest").id == second.id
    assert store.resolve("latest~1").id == first.id
    assert store.resolve(first.id).id == first.id
    assert store.resolve(unfinished.id[:-2]).id == unfinished.id
    with pytest.raises(UsageError) as err:
        store.resolve("latest~2")
    assert str(err.value) == f"'latest~2': {db} holds 2 complete runs"
    with pytest.raises(UsageError) as err:
        store.resolve("nope")
    assert str(err.value) == f"no run 'nope' in {db} (see `localeval runs list`)"
    with pytest.raises(UsageError) as err:
        store.resolve("2")  # every id starts with the year
    assert str(err.value) == "'2' matches more than one run; give more of the id"
    listed = store.list_runs()
    assert [r.id for r in listed] == [unfinished.id, second.id, first.id]
    assert [r.status for r in listed] == ["incomplete (6/6)", "complete", "complete"]


@pytest.mark.both_stores
def test_judge_settings_are_stored_with_the_run(db: Location) -> None:
    """results.json, `runs show` and `diff` read runs back from the database: the settings
    that change the judge's numbers must survive it."""
    store = RunStore.open(db)
    run = run_in_memory(samples())
    settings = {"batch_size": 64, "call_protocol": 2}
    run.info.judge = {**(run.info.judge or {}), "settings": settings}
    stored = store_run(store, run)
    assert store.get(stored.id).info.judge == run.info.judge
    assert header_of(store, store.get(stored.id))["run"]["judge"]["settings"] == settings


@pytest.mark.both_stores
def test_incomplete_run_is_found_by_its_fingerprint_only(db: Location) -> None:
    store = RunStore.open(db)
    run = run_in_memory(samples())
    stored = store.start(run.info, 6, DEFAULT_THRESHOLDS)
    store.record_sample(stored.id, 0, run.samples[0])
    (found,) = store.find_resumable(fingerprint(run.info))
    assert found.id == stored.id and found.n_done == 1
    assert store.has_sample(stored.id, "s0") and not store.has_sample(stored.id, "s1")
    other = RunInfo(**{**run.info.__dict__, "judge": {"name": "j", "sha256": "2" * 64}})
    assert store.find_resumable(fingerprint(other)) == []
    # the same file run with another batch size is another evaluation (other numbers)
    judge = {**(run.info.judge or {}), "settings": {"batch_size": 64}}
    assert store.find_resumable(fingerprint(RunInfo(**{**run.info.__dict__, "judge": judge}))) == []
    with pytest.raises(ValueError):
        store.complete(stored.id, [])  # never marked complete with samples missing
    # a second process continuing the same run may store a sample first: no error, no copy
    store.record_sample(stored.id, 0, run.samples[0])
    assert store.get(stored.id).n_done == 1


def test_full_disk_is_a_clear_error_and_keeps_what_was_stored(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "h.db")
    run = run_in_memory(samples(40))
    stored = store.start(run.info, 40, DEFAULT_THRESHOLDS)
    pages = store.connection.execute("PRAGMA page_count").fetchone()[0]
    store.connection.execute(f"PRAGMA max_page_count = {pages + 2}")  # a disk about to fill
    with pytest.raises(UsageError) as err:
        for position, result in enumerate(run.samples):
            store.record_sample(stored.id, position, result)
    assert str(err.value) == (
        f"database {tmp_path / 'h.db'}: database or disk is full while storing a sample's "
        "scores. Runs stored so far are intact; fix the cause, or use db PATH to put the "
        "database elsewhere"
    )
    kept = store.get(stored.id).n_done
    assert 0 < kept < 40
    store.close()
    reopened = RunStore.open(tmp_path / "h.db")
    assert reopened.get(stored.id).n_done == kept
    assert reopened.connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_full_disk_while_writing_results_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "results.json"
    out.write_text('{"old": true}\n')

    def disk_full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(UsageError) as err:
        write_results(out, {"run": {}}, iter([{"sample_id": "a"}]))
    assert str(err.value) == f"cannot write {out}: No space left on device"
    assert out.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no half-written file


@pytest.mark.both_stores
def test_a_run_read_in_pages_reads_as_in_one(db: Location, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run is read PAGE samples at a time (memory bounded on either store): the pages join
    into the same samples, in the same order, as one read."""
    from localeval.history import run_reads

    store = RunStore.open(db)
    stored = store_run(store, run_in_memory(samples(7)))
    whole = list(store.sample_dicts(stored))
    columns = store.score_columns(stored)
    for page in (1, 3, 7):
        monkeypatch.setattr(run_reads, "PAGE", page)
        assert list(store.sample_dicts(stored)) == whole
        paged = store.score_columns(stored)
        assert paged.sample_ids == columns.sample_ids == [f"s{i}" for i in range(7)]
        for metric, scores in columns.scores.items():
            np.testing.assert_array_equal(paged.scores[metric], scores)
    store.close()


@pytest.mark.both_stores
def test_a_run_another_store_writes_is_never_deleted(db: Location) -> None:
    """Until the writer's store is closed (on a server: its connection ended)."""
    from localeval.errors import RunInUseError
    from localeval.history.cleanup import delete_runs, plan_pruning

    writer = RunStore.open(db)
    stored = store_run(writer, run_in_memory(samples(2)), complete=False)
    other = RunStore.open(db)
    assert other.held_by_other(other.get(stored.id))
    with pytest.raises(RunInUseError):
        delete_runs(other, [other.get(stored.id)])
    assert [run.id for run in plan_pruning(other, 0).busy] == [stored.id]
    writer.close()
    assert not other.held_by_other(other.get(stored.id))
    delete_runs(other, [other.get(stored.id)])
    assert other.list_runs() == []
    other.close()
