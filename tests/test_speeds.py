"""The speeds an estimate prices its work at: measured once per machine, judge and settings,
and kept in the user's cache folder, so a fresh database (each CI job's) does not measure
them again; kept in the database where that folder cannot be written; written whole by
each of two processes measuring at once; keyed by what the speed depends on, not by the
host's name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from run_db import as_setting
from test_estimate import DEMO, CachedFake, backend, evaluate, models

from localeval.database import Location, open_store
from localeval.estimate import speed
from localeval.estimate.speed import EmbedderSpeed, _kept_or_measured, machine, speeds_folder
from localeval.judge import JudgeSpeed

__all__ = ["backend"]  # the fixture, shared with test_estimate


def test_a_fresh_database_on_the_same_machine_measures_nothing(
    tmp_path: Path, backend: CachedFake
) -> None:
    """Each CI job starts with a new database: the judge is measured by the first only."""
    toml = models(tmp_path)
    for job in range(3):
        out = tmp_path / f"estimate-{job}.json"
        args = ("--models", toml, "--estimate", "--db", tmp_path / f"job-{job}.db", "-o", out)
        result = evaluate(DEMO, *args)
        assert result.exit_code == 0, result.output
        assert json.loads(out.read_text())["estimate"]["timed"]
    assert backend.measured == 1
    kept = list((tmp_path / "user-cache" / "localeval" / "speeds").glob("*.json"))
    record = json.loads(
        next(p for p in kept if json.loads(p.read_text())["model"] == "j").read_text()
    )
    assert record["machine"] == machine() and set(record["speed"]) == set(
        JudgeSpeed.__dataclass_fields__
    )


@pytest.mark.both_stores
def test_where_the_cache_folder_cannot_be_written_the_database_keeps_the_speed(
    tmp_path: Path, backend: CachedFake, monkeypatch: pytest.MonkeyPatch, db: Location
) -> None:
    """A read-only home (here: the cache folder's place is taken by a file, which stops
    root as well): the speed is kept in the run's database (a file, or the team's server),
    and read from it next time."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    toml = models(tmp_path)
    for _ in range(2):
        result = evaluate(DEMO, "--models", toml, "--estimate", "--db", as_setting(db))
        assert result.exit_code == 0, result.output
    assert backend.measured == 1
    store = open_store(db)
    assert [row[0] for row in store.execute("SELECT model FROM model_speed ORDER BY model")] == [
        "e",
        "j",
    ]
    store.close()


def test_the_cache_folder_is_the_users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert speeds_folder() == tmp_path / "xdg" / "localeval" / "speeds"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for ignored in ("", "relative/cache"):  # the XDG spec: a relative path is ignored
        monkeypatch.setenv("XDG_CACHE_HOME", ignored)
        assert speeds_folder() == tmp_path / "home" / ".cache" / "localeval" / "speeds"


def test_a_speed_is_kept_by_machine_as_its_speed_depends_on_it_not_by_host_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = machine()
    monkeypatch.setattr(speed.platform, "node", lambda: "ci-runner-7f3a")
    assert machine() == here and "ci-runner" not in here
    assert f"of {speed.os.cpu_count()} cores" in here
    monkeypatch.setattr(
        speed, "_read", lambda path: "200000 100000" if "cgroup" in str(path) else ""
    )
    assert machine() != here and "limited to 2 CPUs" in machine()


def test_a_write_cut_short_leaves_the_kept_figure_whole(
    isolated_database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A figure is written whole under a name of its own and renamed into place: a writer
    stopped half way (the disk full, the process killed), or another process writing at the
    same moment, never leaves a reader half a file; what was kept stays as it was."""
    store = open_store(isolated_database)
    first = EmbedderSpeed(100.0, 0.5)
    assert _kept_or_measured(store, EmbedderSpeed, "e", "k", lambda: first) == first
    kept = speeds_folder() / "k.json"  # type: ignore[operator]
    before = kept.read_text(encoding="utf-8")

    def half_then_full(record: object, out: Any, **options: Any) -> None:
        out.write(json.dumps(record)[:20])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(speed.json, "dump", half_then_full)
    assert not speed._keep_in_folder("k", "e", {"texts_per_s": 50.0, "load_seconds": 0.5})
    assert kept.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in kept.parent.iterdir()) == ["k.json"]  # no half file left
    # a measurement the folder could not take is kept in the database instead
    second = EmbedderSpeed(50.0, 0.5)
    assert _kept_or_measured(store, EmbedderSpeed, "e", "k2", lambda: second) == second
    assert _kept_or_measured(store, EmbedderSpeed, "e", "k2", None) == second
    store.close()
