"""The database schema: migrations from every earlier version, and refusal of newer ones."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from run_db import database_at_version

from localeval.database import MIGRATIONS, open_store, schema_version
from localeval.errors import UsageError


def test_new_database_has_every_migration(tmp_path: Path) -> None:
    connection = open_store(tmp_path / "new.db")
    assert schema_version(connection) == len(MIGRATIONS) >= 2
    tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"judge_cache", "embedding_cache", "runs", "run_samples", "run_scores"} <= tables


def test_version_1_database_is_upgraded_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.executescript(f"BEGIN;\n{MIGRATIONS[0]}\nPRAGMA user_version = 1;\nCOMMIT;")
    old.execute(
        "INSERT INTO judge_cache (key, judge_sha256, kind, value, prompt_tokens, "
        "generated_tokens) VALUES ('k', 'sha', 'generate', '{}', 3, 4)"
    )
    old.close()

    connection = open_store(path)
    assert schema_version(connection) == len(MIGRATIONS)
    assert connection.execute("SELECT key, prompt_tokens FROM judge_cache").fetchall() == [("k", 3)]
    assert connection.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_deleting_a_run_deletes_its_samples_and_scores(tmp_path: Path) -> None:
    connection = open_store(tmp_path / "fk.db")
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
    connection.execute("INSERT INTO run_scores VALUES ('r', 'q1', 'm', 0.5, NULL, '{}')")
    with pytest.raises(sqlite3.IntegrityError):  # a score needs its sample
        connection.execute("INSERT INTO run_scores VALUES ('r', 'q2', 'm', 0.5, NULL, '{}')")
    connection.execute("DELETE FROM runs WHERE id = 'r'")
    assert connection.execute("SELECT count(*) FROM run_scores").fetchone() == (0,)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    future = sqlite3.connect(path)
    future.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    future.close()
    with pytest.raises(UsageError) as err:
        open_store(path)
    assert str(err.value) == (
        f"database schema version {len(MIGRATIONS) + 1} is newer than this "
        f"localeval understands ({len(MIGRATIONS)}); upgrade localeval"
    )


def test_version_5_database_gets_the_run_lease_and_keeps_its_runs(tmp_path: Path) -> None:
    """Migration 6 (runs.owner, runs.heartbeat) on a database of main's schema 5, whose runs
    carry judge_extra: the run reads back as it was, with no owner (free to continue), and
    a second open changes nothing."""
    from localeval.runs.history import RunStore

    path = tmp_path / "v5.db"
    old = database_at_version(path, 5)
    old.execute(
        "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, n_samples, "
        "judge_name, judge_sha256, prompt_version, metrics, metric_settings, thresholds, "
        "localeval_version, judge_settings, judge_extra, embedder_name, embedder_extra) "
        "VALUES ('r', 't', 'f', 'd', 's', 1, 'j', 'sha', 'rag-3', '[\"bleu\"]', '{}', '{}', 'v', "
        '\'{"n_ctx":4096}\', \'{"calibration":{"supported":[]}}\', \'e\', \'{"prefix":"q: "}\')'
    )
    old.close()

    store = RunStore.open(path)
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
    again = RunStore.open(path)  # already up to date: nothing is applied twice
    assert schema_version(again.connection) == len(MIGRATIONS)
    assert again.get("r").owner is None
    again.close()


def test_version_6_database_gets_shards_and_retries_and_keeps_its_runs(tmp_path: Path) -> None:
    """Migration 7 (runs.shard, run_samples.retries) on a database of schema 6: a run and
    its sample read back as they were, a run of every sample (no shard) that cost no
    retries, and a second open changes nothing."""
    from localeval.runs.history import RunStore

    path = tmp_path / "v6.db"
    old = database_at_version(path, 6)
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

    store = RunStore.open(path)
    assert schema_version(store.connection) == len(MIGRATIONS)
    run = store.get("r")
    assert run.info.judge == {"name": "j", **server}
    assert run.info.shard is None
    usage = store.usage("r")
    assert (usage.judge_calls, usage.prompt_tokens, usage.retries) == (2, 30, 0)
    store.close()
    again = RunStore.open(path)  # already up to date: nothing is applied twice
    assert schema_version(again.connection) == len(MIGRATIONS)
    assert again.get("r").info.shard is None
    again.close()


def test_version_7_database_marks_no_run_invalid_and_keeps_them_resumable(tmp_path: Path) -> None:
    """Migration 8 (runs.invalid) on a database of schema 7: an interrupted run reads back
    as one that may be continued, and is still found to resume."""
    from localeval.runs.history import RunStore

    path = tmp_path / "v7.db"
    old = database_at_version(path, 7)
    old.execute(
        "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, n_samples, "
        "prompt_version, metrics, metric_settings, thresholds, localeval_version) "
        "VALUES ('r', 't', 'f', 'd', 's', 2, 'rag-3', '[\"bleu\"]', '{}', '{}', 'v')"
    )
    old.close()

    store = RunStore.open(path)
    assert schema_version(store.connection) == len(MIGRATIONS)
    assert store.get("r").invalid is None
    assert [run.id for run in store.find_resumable("f")] == ["r"]
    store.close()


def test_a_run_that_asked_no_judge_reads_back_with_no_prompt_version(tmp_path: Path) -> None:
    """The migration that reads '' as no prompt version, on a database just before it: a
    run without a judge (which recorded the default set's name, unasked) loses it, and a
    judged run keeps its own."""
    from localeval.runs.history import RunStore

    version = next(i for i, sql in enumerate(MIGRATIONS) if "SET prompt_version = ''" in sql)
    path = tmp_path / "old.db"
    old = database_at_version(path, version)
    for run_id, judge in (("bleu", None), ("judged", "j")):
        old.execute(
            "INSERT INTO runs (id, created, finished, fingerprint, dataset_path, "
            "dataset_sha256, n_samples, judge_name, prompt_version, metrics, metric_settings, "
            "thresholds, localeval_version) VALUES (?, 't', 't', 'f', 'd', 's', 1, ?, 'rag-3', "
            "'[\"bleu\"]', '{}', '{}', 'v')",
            (run_id, judge),
        )
    old.close()

    store = RunStore.open(path)
    assert store.get("bleu").info.prompt_version is None
    assert store.get("judged").info.prompt_version == "rag-3"
    store.close()


def test_a_database_before_the_speed_table_gets_it_and_keeps_its_runs(tmp_path: Path) -> None:
    """The migration that adds model_speed (the speeds `--estimate` keeps), on a database just
    before it: its runs read back, and the table takes a speed."""
    from localeval.runs.history import RunStore

    version = next(i for i, sql in enumerate(MIGRATIONS) if "CREATE TABLE model_speed" in sql)
    assert version == len(MIGRATIONS) - 1  # appended after every migration main had
    path = tmp_path / "old.db"
    old = database_at_version(path, version)
    old.execute(
        "INSERT INTO runs (id, created, fingerprint, dataset_path, dataset_sha256, n_samples, "
        "prompt_version, metrics, metric_settings, thresholds, localeval_version) "
        "VALUES ('r', 't', 'f', 'd', 's', 2, '', '[\"bleu\"]', '{}', '{}', 'v')"
    )
    old.close()

    store = RunStore.open(path)
    assert schema_version(store.connection) == len(MIGRATIONS)
    assert store.get("r").info.prompt_version is None
    store.connection.execute(
        "INSERT INTO model_speed (key, model, machine, speed) VALUES ('k', 'j', 'm', '{}')"
    )
    assert store.connection.execute("SELECT model, measured FROM model_speed").fetchone()[0] == "j"
    store.close()
