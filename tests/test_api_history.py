"""localeval.History, the run history as an object: listing, showing, comparing and
reporting runs, deleting and pruning them, copying them to another store and merging
shards, each as its command does, on an SQLite file and on a PostgreSQL database. Nothing
is created just to look, and an output is checked before any work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakes import FakeEmbedder, ScriptedJudge
from test_cli import ROW
from test_runs_copy import label

import localeval
from localeval import History
from localeval.api import Deletion
from localeval.cli import main
from localeval.database import Location
from localeval.errors import CopyFailed, NoRunHistory, SameDatabase, UsageError
from localeval.metrics import Tools

pytestmark = pytest.mark.both_stores
ROWS = [ROW | {"sample_id": f"q{n}"} for n in range(3)]


def scored(db: Location, score: float) -> localeval.Evaluation:
    """A run of faithfulness over ROWS, each sample's one statement judged `score`."""
    tools = Tools(judge=ScriptedJudge([score] * len(ROWS)), embedder=FakeEmbedder())
    return localeval.evaluate(
        ROWS, ["faithfulness"], tools=tools, db=db, resume=False, progress=False
    )


def test_runs_are_listed_got_and_shown(db: Location, tmp_path: Path) -> None:
    first, second = scored(db, 0.9), scored(db, 0.2)
    with History(db) as history:
        assert history.exists and history.location == db
        assert [run.id for run in history.runs()] == [second.run_id, first.run_id]
        assert [run.id for run in history.runs(limit=1)] == [second.run_id]
        assert history.get("latest~1").id == first.run_id
        shown = history.show("latest")
        assert shown.run.id == second.run_id and shown.output is None
        assert shown.view.summaries["faithfulness"].mean == pytest.approx(0.2)
        assert [g.metric for g in shown.recorded_gates] == ["faithfulness"]
        assert shown.gates_read_again  # faithfulness's verdicts are people's to label
        assert history.results("latest") == second.to_dict()
        assert history.results(second) == second.to_dict()
        checked: list[Any] = []
        out = tmp_path / "results.json"
        history.show(first.run_id, output=out, on_output=checked.append)
        assert json.loads(out.read_text("utf-8")) == first.to_dict()
        assert [target.replaces for target in checked] == [False]
        history.show(first.run_id, output=out, on_output=checked.append)
        assert [target.replaces for target in checked] == [False, True]


def test_an_open_history_sees_runs_made_since(db: Location) -> None:
    first = scored(db, 0.9)
    with History(db) as history:
        assert [run.id for run in history.runs()] == [first.run_id]
        second = scored(db, 0.2)  # another connection writes it
        assert [run.id for run in history.runs()] == [second.run_id, first.run_id]
        assert history.get("latest").id == second.run_id
        with pytest.raises(UsageError, match="limit 0: must be 1 or more"):
            history.runs(limit=0)


def test_reading_creates_no_history(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    history = History(missing)
    assert not history.exists
    with pytest.raises(NoRunHistory, match="no run history at") as raised:
        history.runs()
    assert raised.value.absence == "does not exist"
    with pytest.raises(NoRunHistory):
        history.report("latest", "md")
    history.close()
    assert not missing.exists()
    assert repr(History(missing)) == f"<History {missing}>"


def test_diff_and_report_are_the_modules_calls(db: Location, tmp_path: Path) -> None:
    base, new = scored(db, 0.9), scored(db, 0.2)
    with History(db) as history:
        comparison = history.diff("latest~1", "latest", top=2)
        assert [c.metric for c in comparison.regressions(0.05)] == ["faithfulness"]
        same = localeval.diff(base, new, top=2).as_dict()  # the runs labelled by their ids
        assert comparison.as_dict()["metrics"] == same["metrics"]
        assert history.report("latest", "md") == localeval.report(new, "md")
        assert history.report(new, "json", baseline=base) == localeval.report(
            "latest", "json", baseline="latest~1", db=db
        )
        out = tmp_path / "diff.json"
        history.diff(base, "latest", output=out)
        assert json.loads(out.read_text("utf-8"))["metrics"] == comparison.as_dict()["metrics"]
        page = tmp_path / "report.md"
        assert history.report("latest", "md", output=page) == page.read_text("utf-8")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda h: h.diff("latest", "latest", max_drop=2), "must be between 0 and 1"),
        (lambda h: h.diff("latest", "latest", top=-1), "top -1: must be 0 or more"),
        (lambda h: h.report("latest", "pdf"), "unknown report format 'pdf'"),
        (lambda h: h.get("nosuchrun"), "no run 'nosuchrun'"),
    ],
)
def test_bad_calls_raise(db: Location, call: Any, message: str) -> None:
    scored(db, 0.9)
    with History(db) as history, pytest.raises(UsageError, match=message):
        call(history)


def test_an_output_is_never_a_file_the_call_reads(db: Location, tmp_path: Path) -> None:
    scored(db, 0.9)
    results = tmp_path / "base.json"
    with History(db) as history:
        history.show("latest", output=results)  # a results.json to compare
        before = results.read_text("utf-8")
        with pytest.raises(UsageError, match="same file as a results file compared"):
            history.diff(results, "latest", output=results)
        with pytest.raises(UsageError, match="same file as a results file reported"):
            history.report(results, "md", output=results)
        assert results.read_text("utf-8") == before


def test_delete_asks_and_keeps_labelled_runs(db: Location) -> None:
    kept, labelled, old = scored(db, 0.9), scored(db, 0.5), scored(db, 0.2)
    label(db, labelled.run_id, "ana", 2)
    asked: list[Deletion] = []
    with History(db) as history:
        declined = history.delete(old.run_id, confirm=lambda plan: asked.append(plan) or False)
        assert not declined.deleted and [r.id for r in asked[0].runs] == [old.run_id]
        assert len(history.runs()) == 3
        done = history.delete([old.run_id])
        assert done.deleted and done.n_labels == 0 and done.location == db
        if isinstance(db, Path):  # a file's size; a server's database has none
            assert done.size_before is not None and done.size_after is not None
        with pytest.raises(UsageError, match="holds 2 labels of your team"):
            history.delete(labelled.run_id)
        assert history.delete([labelled.run_id], with_labels=True).n_labels == 2
        assert [run.id for run in history.runs()] == [kept.run_id]


def test_prune_says_what_it_keeps(db: Location) -> None:
    labelled, old, new = scored(db, 0.5), scored(db, 0.2), scored(db, 0.9)
    label(db, labelled.run_id, "ana", 1)
    with History(db) as history:
        pruned = history.prune(1)
        assert [run.id for run in pruned.runs] == [old.run_id] and pruned.deleted
        assert [(run.id, n) for run, n in pruned.labelled] == [(labelled.run_id, 1)]
        asked: list[Deletion] = []
        nothing = history.prune(2, confirm=lambda plan: asked.append(plan) or True)
        assert nothing.runs == [] and not nothing.deleted and len(asked) == 1
        assert [run.id for run in history.runs()] == [new.run_id, labelled.run_id]
        with pytest.raises(UsageError, match="must be 0 or more"):
            history.prune(-1)


def test_copy_to_another_store(db: Location, another_database: Location) -> None:
    run = scored(db, 0.9)
    with History(db) as history:
        copied = history.copy_to(another_database, ["latest"])
        assert copied.copied == [run.run_id] and str(copied.target) == str(another_database)
        assert history.copy_to(History(another_database), "latest").present == [run.run_id]
        with pytest.raises(SameDatabase):
            history.copy_to(db, ["latest"])
        with pytest.raises(CopyFailed, match="no run 'nosuchrun'") as failed:
            history.copy_to(another_database, ["nosuchrun"])
        assert failed.value.side == "source"
    with History(another_database) as copy:
        assert copy.results(run.run_id) == run.to_dict()


def test_merge_joins_shards(db: Location, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "fake.toml"
    models.write_text('[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n', "utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    data = tmp_path / "data.jsonl"
    rows = [ROW | {"sample_id": f"q{n}"} for n in range(6)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    shards = []
    for k in (1, 2):
        shards.append(tmp_path / f"shard{k}.json")
        args = ["evaluate", str(data), "-mfaithfulness", "--shard", f"{k}/2", "--no-progress"]
        done = CliRunner().invoke(main, [*args, "-o", str(shards[-1])])
        assert done.exit_code in (0, 1), done.output
    merged = tmp_path / "merged.json"
    with History(db) as history:
        outcome = history.merge([str(s) for s in shards], output=merged)
        assert outcome.run.complete and outcome.run.n_samples == 6
        assert history.get("latest").id == outcome.run.id
        assert outcome.passed == all(g.passed for g in outcome.view.gates)
    samples = json.loads(merged.read_text("utf-8"))["samples"]
    assert [s["sample_id"] for s in samples] == [f"q{n}" for n in range(6)]
