"""`localeval.evaluate()`'s keywords that are `localeval evaluate`'s options (baseline,
until_decided, estimate, output, shard, the budget, resume, events), each behaving as its
flag does: the command is a client of the call."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from test_until_decided import (  # hash_judge: its autouse stand-ins
    FAITHFULNESS,
    N_SAMPLES,
    hash_judge,  # noqa: F401
    run,
    version,
)

import localeval
from localeval.errors import BudgetSpent, UsageError

#: faithfulness only, gated at 0 (the hash judge's scores fail the default gate)
GATED = {"metrics": ["faithfulness"], "thresholds": {"faithfulness": 0.0}}
FLAGS = FAITHFULNESS


def evaluate(data: Any, **keywords: Any) -> localeval.Evaluation:
    """The call as the tests make it: no progress bar, models loaded for the call alone
    (each test's stand-ins are its own)."""
    given = {**GATED, "progress": False, "keep_models": False, **keywords}
    return localeval.evaluate(data, **given)


def test_a_baseline_comparison_fails_passed_as_the_flag_exits_1(tmp_path: Path) -> None:
    base = evaluate(version(tmp_path / "base.jsonl"))
    assert base.passed and base.comparison is None and base.regressions == []
    worse = version(tmp_path / "worse.jsonl", unsupported=True)
    new = evaluate(worse, baseline=base, resume=False)  # an Evaluation, or its id
    assert new.comparison is not None and new.decision is None
    assert [m.metric for m in new.regressions] == ["faithfulness"]
    assert all(g.passed for g in new.gates) and not new.passed  # the gates pass; it regressed
    # the same comparison tolerated: max_drop as --max-drop
    assert evaluate(worse, baseline=base.run_id, max_drop=1.0, resume=False).passed
    # the command line: the same verdict as its exit code
    flagged = run("evaluate", worse, *FLAGS, "--baseline", base.run_id, "--no-progress")
    assert flagged.exit_code == 1 and "faithfulness" in flagged.stdout


def test_until_decided_stops_once_decided_and_the_same_call_without_it_completes(
    tmp_path: Path,
) -> None:
    base = evaluate(version(tmp_path / "base.jsonl"))
    worse = version(tmp_path / "worse.jsonl", unsupported=True)
    decided = evaluate(worse, baseline=base.run_id, until_decided=True, margin=0.05)
    assert decided.decision is not None and decided.decision.worse == ["faithfulness"]
    assert decided.decision.verdicts == {"faithfulness": "worse"}
    assert not decided.complete and decided.n_scored < decided.n_samples == N_SAMPLES
    assert not decided.passed and decided.comparison is None
    assert decided.to_dict()["run"]["until_decided"]["verdicts"] == {"faithfulness": "worse"}
    # the same evaluation without until_decided scores the rest of the same run
    rest = evaluate(worse)
    assert rest.run_id == decided.run_id and rest.complete and rest.n_scored == N_SAMPLES


def test_until_decided_needs_a_baseline(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="baseline"):
        evaluate(version(tmp_path / "d.jsonl"), until_decided=True)


def fake_models(folder: Path) -> Path:
    """A models.toml naming the fake backend, which can be estimated (the stand-ins cannot)."""
    models = folder / "fake.toml"
    models.write_text('[judges."j"]\nbackend = "fake"\n[embedders."e"]\nbackend = "fake"\n')
    return models


def test_an_estimate_counts_what_the_flag_counts_and_evaluates_nothing(tmp_path: Path) -> None:
    data, models = version(tmp_path / "d.jsonl"), fake_models(tmp_path)
    out = tmp_path / "estimate.json"
    cost = localeval.estimate_cost(data, models=models, output=out, **GATED)
    assert isinstance(cost, localeval.EvaluationCost) and cost.division is None
    assert cost.estimate.n_items == N_SAMPLES and cost.estimate.usage.judge_calls > 0
    assert cost.written == out and json.loads(out.read_text()) == cost.as_dict()
    flagged = run(
        "evaluate", data, *FLAGS, "--models", models, "--estimate", "-o", tmp_path / "flag.json"
    )
    assert flagged.exit_code == 0, flagged.output
    ours, theirs = cost.as_dict()["estimate"], json.loads((tmp_path / "flag.json").read_text())
    assert ours["usage"] == theirs["estimate"]["usage"]
    assert ours["by_metric"] == theirs["estimate"]["by_metric"]


def test_an_estimate_takes_evaluates_keywords_and_refuses_a_budget(tmp_path: Path) -> None:
    data, models = version(tmp_path / "d.jsonl"), fake_models(tmp_path)
    with pytest.raises(UsageError) as refused:
        localeval.estimate_cost(data, max_calls=5)
    # named as the caller knows them (the command line says --estimate, --max-calls)
    assert str(refused.value) == (
        "estimate_cost() evaluates nothing: max_minutes and max_calls do not apply"
    )
    with pytest.raises(TypeError, match="max_call"):
        localeval.estimate_cost(data, max_call=5)  # as a call to evaluate() would
    quarter = localeval.estimate_cost(data, models=models, shard="1/4", **GATED)
    assert 0 < quarter.estimate.n_items < N_SAMPLES


def test_the_output_file_is_results_json(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    evaluation = evaluate(version(tmp_path / "d.jsonl"), output=out)
    assert json.loads(out.read_text()) == evaluation.to_dict()
    # never onto the data itself, as --output
    with pytest.raises(UsageError, match="refusing to overwrite"):
        evaluate(tmp_path / "d.jsonl", output=tmp_path / "d.jsonl", resume=False)


def test_shards_partition_the_samples(tmp_path: Path) -> None:
    data = version(tmp_path / "d.jsonl")
    first, second = (evaluate(data, shard=f"{k}/2") for k in (1, 2))
    ids = [{s["sample_id"] for s in shard.samples} for shard in (first, second)]
    assert ids[0] and ids[1] and not ids[0] & ids[1]
    assert ids[0] | ids[1] == {f"s-{i}" for i in range(N_SAMPLES)}
    assert first.to_dict()["run"]["shard"] == "1/2"
    with pytest.raises(UsageError):
        evaluate(data, shard="3/2")


def test_a_budget_stops_the_run_and_the_same_call_continues_it(tmp_path: Path) -> None:
    data = version(tmp_path / "d.jsonl")
    with pytest.raises(BudgetSpent, match=r"max.calls 3"):
        evaluate(data, max_calls=3)
    with pytest.warns(localeval.LocalevalWarning, match="continuing run"):
        continued = evaluate(data)
    assert continued.complete and continued.scored is not None
    assert 0 < len(continued.scored.samples) < N_SAMPLES  # only what the first call left


def test_resume_by_run_id_and_a_new_run(tmp_path: Path) -> None:
    data = version(tmp_path / "d.jsonl")
    with pytest.raises(BudgetSpent):
        evaluate(data, max_calls=3)
    fresh = evaluate(data, resume=False)
    assert fresh.scored is not None and len(fresh.scored.samples) == N_SAMPLES
    (stopped,) = [
        line.split()[0]
        for line in run("runs", "list").stdout.splitlines()[1:]
        if "INCOMPLETE" in line
    ]
    with pytest.warns(localeval.LocalevalWarning, match=f"continuing run {stopped}"):
        assert evaluate(data, resume=stopped).run_id == stopped


class Recorded(localeval.EvaluationEvents):
    """Events that keep what they are told."""

    def __init__(self) -> None:
        self.told: list[tuple[str, Any]] = []

    def loaded(self, n_samples: int, n_skipped: int, metrics: Sequence[str], data: str) -> None:
        self.told.append(("loaded", (n_samples, list(metrics), data)))

    def estimated(self, seconds: Mapping[str, float]) -> None:
        self.told.append(("estimated", len(seconds)))

    def scored(self, result: Any) -> None:
        self.told.append(("scored", result.sample.sample_id))

    def evaluated(self, evaluation: Any) -> None:
        self.told.append(("evaluated", evaluation))


def test_events_given_are_told_in_place_of_the_warnings(tmp_path: Path) -> None:
    events = Recorded()
    rows = [json.loads(line) for line in version(tmp_path / "d.jsonl").read_text().splitlines()]
    evaluation = evaluate(rows[:3], events=events)
    assert events.told[0] == ("loaded", (3, ["faithfulness"], "<samples>"))
    assert [what for what, _ in events.told[1:]] == ["scored"] * 3 + ["evaluated"]
    assert events.told[-1][1] is evaluation  # told before results.json is written
    assert evaluation.scored is None  # the default events keep them; these did not


def test_ray_settings_are_checked_before_the_data_is_read(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="must be at least 1, got 0"):
        evaluate(tmp_path / "missing.jsonl", ray=localeval.RaySettings(actors=0))


#: the flags whose keyword is named otherwise, and where each goes
RENAMED = {
    "judge_name": "judge",
    "embedder_name": "embedder",
    "models_path": "models",
    "db_path": "db",
    "new_run": "resume",  # resume=False
    "ray_address": "ray",  # RaySettings(address, actors, threads)
    "ray_actors": "ray",
    "ray_threads": "ray",
}


def test_every_option_of_the_command_is_a_keyword_of_the_call() -> None:
    """An option added to the command must be added to the call (or be the metrics' own,
    which go in `options`); --estimate is the call estimate_cost()."""
    import inspect

    import click

    from localeval.cli.evaluate import COMMAND
    from localeval.metrics import metric_options

    keywords = set(inspect.signature(localeval.evaluate).parameters)
    metrics_own = {o.dest for _, o in metric_options()} | {
        o.old_dest for _, o in metric_options() if o.old_dest
    }
    params = COMMAND.get_params(click.Context(COMMAND))
    names = {p.name for p in params if p.expose_value and p.name not in metrics_own}
    assert names - {"estimate_only"} - keywords - set(RENAMED) == set()
    assert set(RENAMED.values()) <= keywords
