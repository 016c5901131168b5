"""Runs split across machines: `evaluate --shard K/N` and `runs merge` give exactly the
summary, intervals, gates and samples of one run over all samples. The judge is the
deterministic fake (backend "fake"), so the shards score what one run would. Each runs on an
SQLite file and on a PostgreSQL database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from run_db import query, write

from localeval.cli import main
from localeval.data.shards import Shard
from localeval.database import Location
from localeval.errors import UsageError

FAKE = '[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n'
pytestmark = pytest.mark.both_stores

METRICS = ["-mfaithfulness", "-mcontext_precision", "-manswer_relevancy", "-mrubric", "-mrouge_l"]


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    models = tmp_path / "fake.toml"
    models.write_text(FAKE, encoding="utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    rows = [
        {
            "sample_id": f"q{i}",
            "category": ["billing", "product", "legal"][i % 3],
            "question": f"What colour is box {i}?",
            "contexts": [f"Box {i} is green.", f"Box {i} is in room {i % 4}."],
            "answer": f"Box {i} is green." + (" It is UNSUPPORTED." if i % 5 == 0 else ""),
            "reference_answer": f"Green, in room {i % 4}.",
        }
        for i in range(23)
    ]
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def evaluate(data: Path, out: Path, *args: str) -> dict[str, Any]:
    result = cli("evaluate", str(data), "-o", str(out), "--no-progress", *METRICS, *args)
    assert result.exit_code in (0, 1), result.output
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def test_shard_membership_is_a_partition_fixed_by_the_sample_id() -> None:
    ids = [f"sample-{i}" for i in range(1000)]
    shards = [Shard(k, 4) for k in range(1, 5)]
    owners = [[s for s in shards if s.holds(i)] for i in ids]
    assert all(len(o) == 1 for o in owners)
    sizes = [sum(o[0] is s for o in owners) for s in shards]
    assert min(sizes) > 200  # roughly even
    assert Shard.parse(" 2/4 ") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"
    for bad in ("0/3", "4/3", "1/0", "a/b", "1"):
        with pytest.raises(UsageError):
            Shard.parse(bad)


def test_merged_shards_equal_one_run_over_all_samples(data: Path, tmp_path: Path) -> None:
    whole = evaluate(data, tmp_path / "whole.json")
    files = []
    for k in (1, 2, 3):
        path = tmp_path / f"shard{k}.json"
        shard = evaluate(data, path, "--shard", f"{k}/3")
        assert shard["run"]["shard"] == f"{k}/3"
        assert all(isinstance(s["position"], int) for s in shard["samples"])
        files.append(str(path))
    merged_path = tmp_path / "merged.json"
    # the shards in any order, as a CI job collects them
    result = cli("runs", "merge", files[2], files[0], files[1], "-o", str(merged_path))
    assert result.exit_code == 1, result.output  # the fake judge fails gates, as `whole` did
    merged = json.loads(merged_path.read_text())
    assert "rubric.accuracy" in whole["summary"]  # sub-scores are summarised too
    for key in ("summary", "summary_by_category", "gates", "samples"):
        assert merged[key] == whole[key], key
    for key in ("metrics", "judge", "embedder", "dataset_sha256", "metric_settings"):
        assert merged["run"][key] == whole["run"][key], key
    assert "shard" not in merged["run"]
    for key in ("judge_calls", "prompt_tokens", "generated_tokens"):
        assert merged["run"]["usage"][key] == whole["run"]["usage"][key]
    # the merged run is a run of the history, like any other
    shown = cli("runs", "show", "latest")
    assert shown.exit_code == 0 and "incomplete" not in shown.output
    diff = cli("diff", str(tmp_path / "whole.json"), "latest")
    assert diff.exit_code == 0, diff.output


def test_shards_are_merged_from_the_history_too(data: Path, tmp_path: Path) -> None:
    whole = evaluate(data, tmp_path / "whole.json")
    for k in (1, 2):
        evaluate(data, tmp_path / f"shard{k}.json", "--shard", f"{k}/2")
    out = tmp_path / "merged.json"
    result = cli("runs", "merge", "latest~1", "latest", "-o", str(out))
    assert result.exit_code == 1, result.output
    merged = json.loads(out.read_text())
    for key in ("summary", "summary_by_category", "gates", "samples"):
        assert merged[key] == whole[key], key


def test_a_shard_whose_data_changed_is_refused_as_invalid(
    data: Path, tmp_path: Path, db: Location
) -> None:
    for k in (1, 2):
        evaluate(data, tmp_path / f"shard{k}.json", "--shard", f"{k}/2")
    ((run_id,),) = query(db, "SELECT id FROM runs ORDER BY created DESC, rowid DESC LIMIT 1")
    why = "its data changed while it was being evaluated"
    write(db, "UPDATE runs SET invalid = ? WHERE id = ?", (why, run_id))
    result = cli("runs", "merge", "latest~1", "latest", "-o", str(tmp_path / "merged.json"))
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: run {run_id} can never be merged: {why}; evaluate that shard again\n"
    )
    assert not (tmp_path / "merged.json").exists()


def test_a_shard_run_resumes_as_a_shard(data: Path, tmp_path: Path) -> None:
    first = evaluate(data, tmp_path / "a.json", "--shard", "2/3")
    again = evaluate(data, tmp_path / "b.json", "--shard", "2/3")
    assert again["run"]["id"] != first["run"]["id"]  # a complete run is not resumed
    other = evaluate(data, tmp_path / "c.json", "--shard", "3/3")
    ids = {s["sample_id"] for s in first["samples"]}
    assert ids.isdisjoint(s["sample_id"] for s in other["samples"])


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        (["1/3", "2/3"], "shard 3/3 missing"),
        (["1/2", "1/2"], "are both shard 1/2"),
        (["1/2", "2/3"], "different numbers of shards"),
        ([None], "is not a shard"),
    ],
)
def test_merge_refuses_what_is_not_all_shards_of_one_evaluation(
    data: Path, tmp_path: Path, shards: list[str | None], message: str
) -> None:
    files = []
    for number, shard in enumerate(shards):
        path = tmp_path / f"part{number}.json"
        evaluate(data, path, *(["--shard", shard] if shard else []))
        files.append(str(path))
    result = cli("runs", "merge", *files)
    assert result.exit_code == 2
    assert message in result.output


def test_merge_refuses_shards_of_different_evaluations(data: Path, tmp_path: Path) -> None:
    evaluate(data, tmp_path / "a.json", "--shard", "1/2")
    result = cli(
        "evaluate", str(data), "-o", str(tmp_path / "b.json"), "--no-progress", "-mfaithfulness",
        "--shard", "2/2",
    )  # fmt: skip
    assert result.exit_code in (0, 1)
    merged = cli("runs", "merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert merged.exit_code == 2
    assert "not one evaluation" in merged.output


def test_a_shard_that_holds_no_sample_is_refused(data: Path, tmp_path: Path) -> None:
    ids = [f"q{i}" for i in range(23)]
    empty = next(k for k in range(1, 61) if not any(Shard(k, 60).holds(i) for i in ids))
    result = cli("evaluate", str(data), "--no-progress", "--shard", f"{empty}/60", "-mrouge_l")
    assert result.exit_code == 2
    assert "holds none of its 23 samples" in result.output
