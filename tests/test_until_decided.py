"""`evaluate NEW --baseline RUN --until-decided`: a comparison that stops when it is decided,
kept as a stopped run that a later `evaluate` completes; its confidence sequence and its
checks of the options."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from fakes import UNSUPPORTED, FakeEmbedder, HashJudge
from script_modules import load_script
from standins import StandIns, models_toml

from localeval.cli import main
from localeval.errors import UsageError
from localeval.results.decision import (
    BETTER,
    NO_CHANGE,
    UNDECIDED,
    WORSE,
    check_margin,
    read_verdict,
    scoring_order,
)
from localeval.sequences import BettingSequence

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.jsonl"
N_SAMPLES = 60
#: faithfulness only, gated at 0 (the hash judge's scores fail the default gate)
FAITHFULNESS = ["-m", "faithfulness", "--threshold", "faithfulness=0"]


@pytest.fixture(autouse=True)
def hash_judge(stand_ins: StandIns, tmp_path_factory: pytest.TempPathFactory) -> HashJudge:
    models = tmp_path_factory.mktemp("models") / "models.toml"
    models.write_text(models_toml())
    stand_ins.models = models
    judge = HashJudge()
    stand_ins.use(judge, FakeEmbedder())
    return judge


def run(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def words(text: str) -> str:
    """`text` with each run of whitespace as one space (the summary is wrapped)."""
    return " ".join(text.split())


def version(path: Path, unsupported: bool = False, prefix: str = "s", tag: str = "Answer") -> Path:
    """N_SAMPLES samples made from the demo's rows; `unsupported`: every answer claims only
    what the contexts do not say (the hash judge calls it unsupported); `tag`: a word each
    answer ends with (another: answers that changed, with none of them unsupported)."""
    demo = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]
    rows = []
    for i in range(N_SAMPLES):
        row = dict(demo[i % len(demo)], sample_id=f"{prefix}-{i}")
        row["answer"] += f" ({tag} {i}.)"
        if unsupported:
            row["answer"] = f"It includes {UNSUPPORTED} free support calls ({i})."
        rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def results(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def latest_complete_id() -> str:
    """The id of the newest complete run, as `runs show latest` says it."""
    shown = run("runs", "show", "latest").stdout
    return shown.split("run:", 1)[1].split()[0]


def baseline_run(tmp_path: Path, unsupported: bool = False) -> None:
    base = version(tmp_path / "base.jsonl", unsupported)
    assert run("evaluate", base, *FAITHFULNESS).exit_code == 0


@pytest.mark.both_stores
def test_worse_is_decided_early_kept_stopped_and_completed_later(tmp_path: Path) -> None:
    baseline_run(tmp_path)
    new = version(tmp_path / "new.jsonl", unsupported=True)
    out = tmp_path / "new.json"
    decided = run(
        "evaluate", new, *FAITHFULNESS, "--baseline", "latest", "--until-decided", "-o", out
    )
    assert decided.exit_code == 1, decided.output  # a metric got worse
    until = results(out)["run"]["until_decided"]
    scored = until["samples_scored"]
    assert 0 < scored < N_SAMPLES
    assert until["samples_total"] == N_SAMPLES
    assert until["verdicts"] == {"faithfulness": WORSE}
    assert until["metrics"]["faithfulness"]["confidence_sequence"][1] < 0
    assert f"Decided after {scored} of {N_SAMPLES} samples" in words(decided.stdout)
    assert "faithfulness worse" in words(decided.stdout)
    assert "stopped by design" in words(decided.stdout)
    assert "different datasets" not in decided.stdout  # new answers: expected, not warned
    assert len(results(out)["samples"]) == scored
    listed = run("runs", "list").stdout
    assert f"INCOMPLETE  {scored}/{N_SAMPLES}" in listed
    # the history keeps the comparison: `runs show` tells it, and writes it as results.json
    run_id = results(out)["run"]["id"]
    shown = run("runs", "show", run_id, "-o", tmp_path / "shown.json")
    assert shown.exit_code == 0, shown.output
    assert (
        f"STOPPED BY DESIGN (evaluate --until-decided): {scored} of {N_SAMPLES} samples scored; "
        "the same `evaluate` without --until-decided (and --margin) scores the rest, or with "
        f"--resume {run_id} in their place"
    ) in words(shown.stdout)
    base_id = latest_complete_id()
    assert (
        f"comparison: decided after {scored} of {N_SAMPLES} samples against run {base_id} "
        "(evaluate --until-decided): faithfulness worse"
    ) in words(shown.stdout)
    assert results(tmp_path / "shown.json")["run"]["until_decided"] == until
    # the same command again: the stored samples decide it at once, nothing is scored
    again = run("evaluate", new, *FAITHFULNESS, "--baseline", "latest", "--until-decided")
    assert again.exit_code == 1
    assert "Resuming run" in again.stderr and f"Decided after {scored} of" in words(again.stdout)
    assert run("runs", "list").stdout.count("INCOMPLETE") == 1
    # without the option, the same evaluation completes the stopped run
    completed = run("evaluate", new, *FAITHFULNESS, "-o", out)
    assert completed.exit_code == 0, completed.output
    assert f"{scored} of {N_SAMPLES} samples were scored" in completed.stderr
    assert results(out)["run"]["until_decided"] == until  # when the comparison decided it
    assert len(results(out)["samples"]) == N_SAMPLES
    assert "INCOMPLETE" not in run("runs", "list").stdout
    shown = words(run("runs", "show", run_id).stdout)
    assert "status: complete" in shown and "STOPPED" not in shown
    assert (
        f"decided after {scored} of {N_SAMPLES} samples against run {base_id} (evaluate "
        f"--until-decided): faithfulness worse; {N_SAMPLES - scored} more scored later by "
        "evaluate without the option"
    ) in shown
    markdown = run("report", run_id, "-f", "md")
    assert markdown.exit_code == 0, markdown.output
    assert f"Comparison: `decided after {scored} of {N_SAMPLES} samples" in markdown.stdout
    page = run("report", run_id, "-f", "html").stdout
    assert f"<dt>comparison</dt><dd>decided after {scored} of {N_SAMPLES} samples" in page


def test_a_comparison_stopped_part_way_goes_on_where_it_was(tmp_path: Path) -> None:
    base = version(tmp_path / "base.jsonl")
    assert run("evaluate", base, *FAITHFULNESS, "-o", tmp_path / "base.json").exit_code == 0
    new = version(tmp_path / "new.jsonl", unsupported=True)
    args = [*FAITHFULNESS, "--baseline", tmp_path / "base.json", "--until-decided"]
    stopped = run("evaluate", new, *args, "--max-calls", "5")
    assert stopped.exit_code == 124, stopped.output
    went_on = run("evaluate", new, *args, "-o", tmp_path / "on.json")
    assert went_on.exit_code == 1 and "Resuming run" in went_on.stderr
    alone = run(
        "evaluate", new, *args, "--db", tmp_path / "other.db", "-o", tmp_path / "alone.json"
    )
    assert alone.exit_code == 1
    on, uninterrupted = results(tmp_path / "on.json"), results(tmp_path / "alone.json")
    assert on["run"]["until_decided"] == uninterrupted["run"]["until_decided"]
    assert [s["sample_id"] for s in on["samples"]] == [
        s["sample_id"] for s in uninterrupted["samples"]
    ]


def test_better_is_decided_and_exits_0(tmp_path: Path) -> None:
    baseline_run(tmp_path, unsupported=True)
    new = version(tmp_path / "new.jsonl")
    out = tmp_path / "new.json"
    decided = run(
        "evaluate", new, *FAITHFULNESS, "--baseline", "latest", "--until-decided", "-o", out
    )
    assert decided.exit_code == 0, decided.output
    until = results(out)["run"]["until_decided"]
    assert until["verdicts"] == {"faithfulness": BETTER}
    assert until["samples_scored"] < N_SAMPLES


def test_answers_alike_are_no_change_within_the_margin(tmp_path: Path) -> None:
    baseline_run(tmp_path)
    new = version(tmp_path / "new.jsonl", tag="Reply")  # changed, none unsupported
    out = tmp_path / "new.json"
    args = ["--baseline", "latest", "--until-decided", "--margin", "0.5", "-o", out]
    decided = run("evaluate", new, *FAITHFULNESS, *args)
    assert decided.exit_code == 0, decided.output
    until = results(out)["run"]["until_decided"]
    assert until["verdicts"] == {"faithfulness": NO_CHANGE}
    assert until["margin"] == 0.5
    assert until["samples_scored"] < N_SAMPLES
    assert "within +-0.5" in words(decided.stdout)


def test_the_datas_end_completes_an_undecided_run_with_its_gates(tmp_path: Path) -> None:
    baseline_run(tmp_path)
    # answers changed alike: no change, which 60 samples cannot show at 0.01
    new = version(tmp_path / "new.jsonl", tag="Reply")
    out = tmp_path / "new.json"
    args = ["--baseline", "latest", "--until-decided", "--margin", "0.01", "-o", out]
    ended = run("evaluate", new, "-m", "faithfulness", "--threshold", "faithfulness=0.99", *args)
    assert ended.exit_code == 1, ended.output  # the gate, checked on the whole run, failed
    until = results(out)["run"]["until_decided"]
    assert until == {**until, "samples_scored": N_SAMPLES, "samples_total": N_SAMPLES}
    assert until["verdicts"] == {"faithfulness": UNDECIDED}
    assert f"Not decided: all {N_SAMPLES} samples" in words(ended.stdout)
    assert results(out)["gates"][0]["passed"] is False
    assert "INCOMPLETE" not in run("runs", "list").stdout


def test_order_is_seeded_random_and_the_same_every_time(tmp_path: Path) -> None:
    baseline_run(tmp_path)
    new = version(tmp_path / "new.jsonl", unsupported=True)
    picked = []
    for attempt in range(2):
        out = tmp_path / f"new{attempt}.json"
        args = ["--baseline", "latest", "--until-decided", "--no-resume", "-o", out]
        assert run("evaluate", new, *FAITHFULNESS, *args).exit_code == 1
        picked.append([s["sample_id"] for s in results(out)["samples"]])
    assert picked[0] == picked[1]
    order = [f"s-{p}" for p in scoring_order(N_SAMPLES)[: len(picked[0])]]
    assert sorted(picked[0]) == sorted(order)
    assert picked[0] != [f"s-{i}" for i in range(len(picked[0]))]  # not the file's order


def test_bad_options_are_one_line_errors_and_start_no_run(tmp_path: Path) -> None:
    baseline_run(tmp_path)
    new = version(tmp_path / "new.jsonl")
    other = version(tmp_path / "other.jsonl", prefix="other")
    cases = {
        ("--until-decided",): "--until-decided compares with a run: give --baseline RUN",
        ("--baseline", "latest", "--margin", "0.1"): "--margin applies only with --until-decided",
        ("--baseline", "latest", "--until-decided", "--margin", "0"): "--margin must be between",
        ("--baseline", "latest", "--until-decided", "--margin", "1"): "--margin must be between",
        ("--baseline", "latest", "--until-decided", "--margin", "nan"): "--margin must be between",
        ("--baseline", "latest", "--until-decided", "--margin", "-0.1"): "--margin must be between",
        ("--baseline", "latest", "--until-decided", "--margin", "1.5"): "--margin must be between",
    }
    before = run("runs", "list").stdout
    for args, message in cases.items():
        result = run("evaluate", new, *FAITHFULNESS, *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith(f"Error: {message}") and result.stderr.count("\n") == 1
    result = run("evaluate", other, *FAITHFULNESS, "--baseline", "latest", "--until-decided")
    assert result.exit_code == 2
    assert "holds none of these 60 samples (paired by sample_id)" in result.stderr
    assert result.stderr.count("\n") == 1
    assert run("runs", "list").stdout == before


def test_a_baseline_without_the_gated_metric_is_refused(tmp_path: Path) -> None:
    baseline_run(tmp_path)
    new = version(tmp_path / "new.jsonl")
    args = ["--baseline", "latest", "--until-decided"]
    result = run("evaluate", new, "-m", "bleu", "--threshold", "bleu=0", *args)
    assert result.exit_code == 2
    assert "holds none of this run's gated metrics (bleu)" in result.stderr


def test_sequence_covers_the_mean_at_every_look() -> None:
    """200 sequences of 300 draws each: the share that ever excludes the true mean stays
    under 5% (a fixed-sample interval looked at this often misses far more)."""
    rng = np.random.default_rng(3)
    draws = rng.choice([0.0, 0.5, 1.0], p=[0.2, 0.2, 0.6], size=(200, 300))
    mean = 0.5 * 0.2 + 0.6
    sequence = BettingSequence(0.05, shape=(200,))
    missed = np.zeros(200, dtype=bool)
    widths = []
    for t in range(300):
        sequence.update(draws[:, t])
        lower, upper = sequence.interval()
        missed |= (lower > mean) | (upper < mean)
        widths.append(float(np.mean(upper - lower)))
    assert missed.mean() <= 0.05
    assert widths[-1] < 0.25 < widths[9]


def test_sequence_on_its_own_scale_and_verdicts() -> None:
    sequence = BettingSequence(0.05, -1.0, 1.0)
    assert sequence.bounds() == (-1.0, 1.0)
    for _ in range(40):
        sequence.update(-0.8)
    lower, upper = sequence.bounds()
    assert -1.0 <= lower < -0.8 < upper < 0
    assert read_verdict(lower, upper, 0.05) == WORSE
    assert read_verdict(0.01, 0.2, 0.05) == BETTER
    assert read_verdict(-0.04, 0.05, 0.05) == NO_CHANGE
    assert read_verdict(-0.04, 0.06, 0.05) == UNDECIDED
    for bad in (0.0, 1.0, -0.5, math.nan, math.inf):
        with pytest.raises(UsageError):
            check_margin(bad)


def test_simulation_shows_the_naive_bootstrap_wrong_far_more_often() -> None:
    """scripts/simulate_decisions.py, small: with nothing changed, the sequence is rarely
    wrong and the fixed-sample bootstrap looked at after every sample often is."""
    simulate = load_script("simulate_decisions")
    row = simulate.scenario(np.random.default_rng(2), 60, 200, 0.0, 0.05, 0.05)
    assert row["wrong_better_or_worse"] <= 0.05
    assert row["naive_bootstrap_wrong"] >= 0.2
