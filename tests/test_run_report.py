"""A run's report (results.json) is built by one function, whichever way the run is written:
`evaluate -o`, `runs show -o`, `report -f json` from the history, `runs merge` of its
shards, and the Python API (`assert_rag_quality(...).results()`, `RunResult.summary()`).
The same run through every path gives the same document, the rubric's sub-scores included.
The judge is the deterministic fake (backend "fake"), so every path scores the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from localeval.cli import main
from localeval.testing import assert_rag_quality

FAKE = '[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n'
METRICS = ["faithfulness", "rubric", "rouge_l"]
#: gates every path passes (the Python API raises when one fails)
THRESHOLDS = {"faithfulness": 0.0, "rouge_l": 0.0}


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "fake.toml"
    path.write_text(FAKE, encoding="utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(path))
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    rows: list[dict[str, Any]] = [
        {
            "sample_id": f"q{i}",
            "category": ["billing", "product"][i % 2],
            "question": f"What colour is box {i}?",
            "contexts": [f"Box {i} is green.", f"Box {i} is in room {i % 4}."],
            "answer": f"Box {i} is green." + (" It is UNSUPPORTED." if i % 5 == 0 else ""),
            "reference_answer": f"Green, in room {i % 4}.",
        }
        for i in range(11)
    ]
    # no answer: the rubric (and its sub-scores) undefined for one sample
    rows.append({"sample_id": "q-none", "category": "billing", "question": "And box 99?"})
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cli(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def read(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


#: what legitimately differs between two writings of one run: which run it is and when it
#: started (a merged run is a run of its own), and the seconds it took
PER_RUN = ("id", "created")


def comparable(results: dict[str, Any]) -> dict[str, Any]:
    run = {k: v for k, v in results["run"].items() if k not in PER_RUN}
    run["usage"] = {k: v for k, v in run["usage"].items() if k != "seconds"}
    return {**results, "run": run}


def test_the_same_run_written_through_every_path_is_the_same_document(
    data: Path, models: Path, tmp_path: Path
) -> None:
    gates = [f"--threshold={m}={v}" for m, v in THRESHOLDS.items()]
    metrics = [f"-m{m}" for m in METRICS]
    evaluated = tmp_path / "evaluated.json"
    cli("evaluate", data, *metrics, *gates, "--no-progress", "-o", evaluated)
    whole = read(evaluated)
    run_id = whole["run"]["id"]
    shown, reported = tmp_path / "shown.json", tmp_path / "reported.json"
    cli("runs", "show", run_id, "-o", shown)
    cli("report", run_id, "-f", "json", "-o", reported)
    shards = [tmp_path / f"shard{k}.json" for k in (1, 2)]
    for k, shard in enumerate(shards, start=1):
        cli("evaluate", data, *metrics, *gates, "--no-progress", "--shard", f"{k}/2", "-o", shard)
    merged = tmp_path / "merged.json"
    cli("runs", "merge", *shards, "-o", merged)
    quality = assert_rag_quality(
        data, THRESHOLDS, METRICS, judge="j", embedder="e", models=models, use_cache=False
    )
    api = quality.results()

    # the document has what each path left out before: the rubric's sub-scores in the
    # summary, per category and in every sample (None where the rubric is undefined)
    criteria = [f"rubric.{c}" for c in ("accuracy", "completeness", "clarity")]
    assert list(whole["summary"]) == [*METRICS, *criteria]
    assert all(list(c) == [*METRICS, *criteria] for c in whole["summary_by_category"].values())
    assert all(set(criteria) <= set(s["scores"]) for s in whole["samples"])
    undefined = next(s for s in whole["samples"] if s["sample_id"] == "q-none")
    assert [undefined["scores"][c] for c in criteria] == [None, None, None]
    assert whole["summary"]["rubric.accuracy"]["n"] == 11
    assert [g["metric"] for g in whole["gates"]] == list(THRESHOLDS)

    assert read(shown) == whole
    assert read(reported) == whole
    assert comparable(read(merged)) == comparable(whole)
    # assert_rag_quality runs the command's own evaluation (localeval.evaluate), content
    # hash included
    assert comparable(api) == comparable(whole)
    summary = {name: s.as_dict() for name, s in quality.run.summary().items()}
    # beside each summary of a metric made of verdicts: its mean corrected by labels
    corrected = ("corrected", "labels_needed", "labels_not_counted", "labels_disagreeing")
    assert summary == {
        name: {k: v for k, v in entry.items() if k not in corrected}
        for name, entry in whole["summary"].items()
    }
    assert whole["summary"]["faithfulness"]["corrected"] is None


def test_merge_and_show_print_the_sub_scores_evaluate_prints(
    data: Path, models: Path, tmp_path: Path
) -> None:
    evaluated = cli("evaluate", data, "-mrubric", "--no-progress").stdout
    shown = cli("runs", "show", "latest").stdout
    for k in (1, 2):
        cli("evaluate", data, "-mrubric", "--no-progress", "--shard", f"{k}/2")
    merged = cli("runs", "merge", "latest~1", "latest").stdout
    table = evaluated.split("\n\n")[0]
    assert table.splitlines()[2].startswith("rubric.accuracy ")
    assert table in shown and table in merged
