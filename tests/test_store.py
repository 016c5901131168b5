"""The database schema, on an SQLite file and on a PostgreSQL database alike: migrations
from every earlier version, and refusal of newer ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_db import add_old_run, database_at_version, database_before, table_names

from localeval.database import MIGRATIONS, Location, StoreError, open_store, schema_version
from localeval.errors import UsageError

pytestmark = pytest.mark.both_stores


def test_new_database_has_every_migration(db: Location) -> None:
    connection = open_store(db)
    assert schema_version(connection) == len(MIGRATIONS) >= 2
    tables = table_names(connection)
    assert {"judge_cache", "embedding_cache", "runs", "run_samples", "run_scores"} <= tables


@pytest.mark.parametrize("version", range(len(MIGRATIONS)))
def test_every_older_version_is_upgraded_and_stores_a_run(db: Location, version: int) -> None:
    from test_history import run_in_memory, samples, store_run

    from localeval.history.store import RunStore

    database_at_version(db, version).close()
    store = RunStore.open(db)
    assert schema_version(store.connection) == len(MIGRATIONS)
    stored = store_run(store, run_in_memory(samples(2)))
    assert store.resolve("latest").id == stored.id and stored.n_done == 2
    store.close()


def test_version_1_database_is_upgraded_and_keeps_its_rows(db: Location) -> None:
    old = database_at_version(db, 1)
    old.execute(
        "INSERT INTO judge_cache (key, judge_sha256, kind, value, prompt_tokens, "
        "generated_tokens) VALUES ('k', 'sha', 'generate', '{}', 3, 4)"
    )
    old.close()

    connection = open_store(db)
    assert schema_version(connection) == len(MIGRATIONS)
    assert connection.execute("SELECT key, prompt_tokens FROM judge_cache").fetchall() == [("k", 3)]
    assert connection.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    if isinstance(db, Path):
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_deleting_a_run_deletes_its_samples_and_scores(db: Location) -> None:
    connection = open_store(db)
    connection.execute(
        "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, n_samples, "
        "prompt_version, metrics, metric_settings, thresholds, localeval_version) "
        "VALUES ('r', 't', 'f', 'd', 's', 1, 'p', '[]', '{}', '{}', 'v')"
    )
    connection.execute(
        "INSERT INTO run_samples (run_id, sample_id, position, line, category, judge_calls, "
        "cached_calls, prompt_tokens, generated_tokens, seconds, inputs) "
        "VALUES ('r', 'q1', 0, 1, NULL, 0, 0, 0, 0, 0.0, '{}')"
    )
    score = (
        "INSERT INTO run_scores (run_id, sample_id, metric, score, undefined_reason, details) "
        "VALUES ('r', ?, 'm', 0.5, NULL, '{}')"
    )
    connection.execute(score, ("q1",))
    with pytest.raises(StoreError):  # a score needs its sample
        connection.execute(score, ("q2",))
    connection.execute("DELETE FROM runs WHERE id = 'r'")
    assert connection.execute("SELECT count(*) FROM run_scores").fetchone() == (0,)


def test_newer_schema_is_refused(db: Location) -> None:
    future = database_at_version(db, len(MIGRATIONS))
    if isinstance(db, Path):
        future.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    else:
        future.execute("UPDATE localeval_schema SET version = ?", (len(MIGRATIONS) + 1,))
    future.close()
    with pytest.raises(UsageError) as err:
        open_store(db)
    assert str(err.value) == (
        f"database {db}: schema version {len(MIGRATIONS) + 1} is newer than this "
        f"localeval understands ({len(MIGRATIONS)}); upgrade localeval"
    )


def test_version_5_database_gets_the_run_lease_and_keeps_its_runs(db: Location) -> None:
    """Migration 6 (runs.owner, runs.heartbeat) on a database of main's schema 5, whose runs
    carry judge_extra: the run reads back as it was, with no owner (free to continue), and
    a second open changes nothing."""
    from localeval.history.store import RunStore

    old = database_at_version(db, 5)
    old.execute(
        "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, n_samples, "
        "judge_name, judge_sha256, prompt_version, metrics, metric_settings, thresholds, "
        "localeval_version, judge_settings, judge_extra, embedder_name, embedder_extra) "
        "VALUES ('r', 't', 'f', 'd', 's', 1, 'j', 'sha', 'rag-3', '[\"bleu\"]', '{}', '{}', 'v', "
        '\'{"n_ctx":4096}\', \'{"calibration":{"supported":[]}}\', \'e\', \'{"prefix":"q: "}\')'
    )
    old.close()

    store = RunStore.open(db)
    run = store.get("r")
    assert schema_version(store.connection) == len(MIGRATIONS)
    assert run.info.judge == {
        "name": "j",
        "sha256": "sha",
        "settings": {"n_ctx": 4096},
        "calibration": {"supported": []},
    }
    assert run.info.embedder == {"name": "e", "prefix": "q: "}
    assert (run.owner, run.heartbeat) == (None, None)
    store.close()
    again = RunStore.open(db)  # already up to date: nothing is applied twice
    assert schema_version(again.connection) == len(MIGRATIONS)
    assert again.get("r").owner is None
    again.close()


def test_version_6_database_gets_shards_and_retries_and_keeps_its_runs(db: Location) -> None:
    """Migration 7 (runs.shard, run_samples.retries) on a database of schema 6: a run and
    its sample read back as they were, a run of every sample (no shard) that cost no
    retries, and a second open changes nothing."""
    from localeval.history.store import RunStore

    old = database_at_version(db, 6)
    server = {"base_url": "http://gpu:8000/v1", "model": "m", "revision": "r1"}
    old.execute(
        "INSERT INTO runs (id, created, finished, fingerprint, dataset_path, dataset_sha256, "
        "n_samples, judge_name, prompt_version, metrics, metric_settings, thresholds, "
        "localeval_version, judge_extra) VALUES ('r', 't', 't', 'f', 'd', 's', 1, 'j', 'rag-3', "
        "'[\"bleu\"]', '{}', '{}', 'v', ?)",
        (json.dumps(server),),
    )
    old.execute(
        "INSERT INTO run_samples (run_id, sample_id, position, line, category, judge_calls, "
        "cached_calls, prompt_tokens, generated_tokens, seconds, inputs) "
        "VALUES ('r', 'q1', 0, 1, NULL, 2, 0, 30, 4, 0.5, '{}')"
    )
    old.close()

    store = RunStore.open(db)
    assert schema_version(store.connection) == len(MIGRATIONS)
    run = store.get("r")
    assert run.info.judge == {"name": "j", **server}
    assert run.info.shard is None
    usage = store.usage("r")
    assert (usage.judge_calls, usage.prompt_tokens, usage.retries) == (2, 30, 0)
    store.close()
    again = RunStore.open(db)  # already up to date: nothing is applied twice
    assert schema_version(again.connection) == len(MIGRATIONS)
    assert again.get("r").info.shard is None
    again.close()


def test_version_7_database_marks_no_run_invalid_and_keeps_them_resumable(db: Location) -> None:
    """Migration 8 (runs.invalid) on a database of schema 7: an interrupted run reads back
    as one that may be continued, and is still found to resume."""
    from localeval.history.store import RunStore

    old = database_at_version(db, 7)
    add_old_run(old, "rag-3")
    old.close()

    store = RunStore.open(db)
    assert schema_version(store.connection) == len(MIGRATIONS)
    assert store.get("r").invalid is None
    assert [run.id for run in store.find_resumable("f")] == ["r"]
    store.close()


def test_a_run_that_asked_no_judge_reads_back_with_no_prompt_version(db: Location) -> None:
    """The migration that reads '' as no prompt version, on a database just before it: a
    run without a judge (which recorded the default set's name, unasked) loses it, and a
    judged run keeps its own."""
    from localeval.history.store import RunStore

    old = database_before(db, "SET prompt_version = ''")
    for run_id, judge in (("bleu", None), ("judged", "j")):
        old.execute(
            "INSERT INTO runs (id, created, finished, fingerprint, dataset_path, "
            "dataset_sha256, n_samples, judge_name, prompt_version, metrics, metric_settings, "
            "thresholds, localeval_version) VALUES (?, 't', 't', 'f', 'd', 's', 1, ?, 'rag-3', "
            "'[\"bleu\"]', '{}', '{}', 'v')",
            (run_id, judge),
        )
    old.close()

    store = RunStore.open(db)
    assert store.get("bleu").info.prompt_version is None
    assert store.get("judged").info.prompt_version == "rag-3"
    store.close()


def test_a_database_before_the_speed_table_gets_it_and_keeps_its_runs(db: Location) -> None:
    """The migration that adds model_speed (the speeds `--estimate` keeps), on a database just
    before it: its runs read back, and the table takes a speed."""
    from localeval.history.store import RunStore

    old = database_before(db, "CREATE TABLE model_speed")
    add_old_run(old)
    old.close()

    store = RunStore.open(db)
    assert schema_version(store.connection) == len(MIGRATIONS)
    assert store.get("r").info.prompt_version is None
    store.connection.execute(
        "INSERT INTO model_speed (key, model, machine, speed) VALUES ('k', 'j', 'm', '{}')"
    )
    assert store.connection.execute("SELECT model, measured FROM model_speed").fetchone()[0] == "j"
    store.close()


def test_labels_from_before_the_selection_column_read_as_chosen(db: Location) -> None:
    """The migration that records how a label's sample was picked, on a database just
    before it: its labels read back, as picked otherwise than at random (they may have
    been the worst first), and a new label says random."""
    from localeval.labels.store import Label, LabelStore
    from localeval.results.person_values import CHOSEN, RANDOM

    old = database_before(db, "ADD COLUMN selection")
    old.execute(
        "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, n_samples, "
        "prompt_version, metrics, metric_settings, thresholds, localeval_version) "
        "VALUES ('r', 't', 'f', 'd', 's', 1, '', '[\"faithfulness\"]', '{}', '{}', 'v')"
    )
    old.execute(
        "INSERT INTO run_labels (run_id, sample_id, metric, verdict, text, label, reviewer, "
        "created, source) VALUES ('r', 's1', 'faithfulness', 0, 'x', 1.0, 'ann', 't', 'review')"
    )
    old.close()

    store = LabelStore.open(db)
    assert [label.selection for label in store.current("r")] == [CHOSEN]
    new = Label("s1", "faithfulness", 1, "y", 0.0, "ann", selection=RANDOM)
    store.add("r", [new])
    assert [label.selection for label in store.current("r")] == [CHOSEN, RANDOM]
    store.close()


def test_runs_from_before_the_comparison_column_read_as_none_and_a_new_one_is_kept(
    db: Location,
) -> None:
    """The migration that keeps `--until-decided`'s comparison with its run, on a database
    just before it: its runs read back with none, and a run's comparison is stored and read
    back as results.json's `run.until_decided`."""
    from test_history import run_in_memory, samples, store_run

    from localeval.history.store import RunStore
    from localeval.results.contract import run_object

    old = database_before(db, "ADD COLUMN until_decided")
    add_old_run(old)
    old.close()

    with RunStore.open(db) as store:
        assert schema_version(store.connection) == len(MIGRATIONS)
        assert store.get("r").info.until_decided is None
        stored = store_run(store, run_in_memory(samples(2)), complete=False)
        decision = {"samples_scored": 1, "samples_total": 2, "verdicts": {"bleu": "worse"}}
        store.record_decision(stored.id, decision)
        again = store.get(stored.id)
        assert again.info.until_decided == decision
        assert run_object(again.info, store.usage(stored.id))["until_decided"] == decision


def test_the_stores_close_when_their_with_block_ends(db: Location) -> None:
    from localeval.history.store import RunStore
    from localeval.labels.store import LabelStore

    with open_store(db) as connection:
        assert schema_version(connection) == len(MIGRATIONS)
    with RunStore.open(db) as runs:
        assert runs.list_runs(1) == []
    with LabelStore.open(db) as labels:
        assert labels.current("no-such-run") == []
    assert connection.closed and runs.connection.closed and labels.connection.closed
