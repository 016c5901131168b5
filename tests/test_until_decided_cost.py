"""`--until-decided`'s cost kept with its verdict: the samples the comparison scored, the
prompt tokens read, and how many samples read their contexts from kept states, in
results.json, `runs show` and the HTML report (a hash judge that restores, as the llama.cpp
judge restores a sample's contexts from the state store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import KEPT_WORD, FakeEmbedder, RestoringHashJudge
from standins import StandIns, models_toml
from test_until_decided import FAITHFULNESS, N_SAMPLES, WORSE, results, run, version, words


@pytest.fixture
def judge(stand_ins: StandIns, tmp_path_factory: pytest.TempPathFactory) -> RestoringHashJudge:
    models = tmp_path_factory.mktemp("models") / "models.toml"
    models.write_text(models_toml())
    stand_ins.models = models
    restoring = RestoringHashJudge()
    stand_ins.use(restoring, FakeEmbedder())
    return restoring


def test_the_comparisons_cost_is_kept_with_its_verdict(
    tmp_path: Path, judge: RestoringHashJudge
) -> None:
    base = version(tmp_path / "base.jsonl")
    assert run("evaluate", base, *FAITHFULNESS).exit_code == 0
    new = version(tmp_path / "new.jsonl", unsupported=True)
    out = tmp_path / "new.json"
    before = judge.restored_tokens
    decided = run(
        "evaluate", new, *FAITHFULNESS, "--baseline", "latest", "--until-decided", "-o", out
    )
    assert decided.exit_code == 1, decided.output
    written = results(out)
    until = written["run"]["until_decided"]
    assert until["verdicts"] == {"faithfulness": WORSE}
    scored = until["samples_scored"]
    assert 0 < scored < N_SAMPLES
    kept = [s for s in written["samples"] if any(KEPT_WORD in c for c in s["contexts"])]
    assert 0 < len(kept) < scored
    cost = until["cost"]
    assert cost == {
        "samples_scored": scored,
        "prompt_tokens": written["run"]["usage"]["prompt_tokens"],
        "samples_from_states": len(kept),
        "restored_prompt_tokens": judge.restored_tokens - before,
    }
    line = (
        f"{scored} samples scored, {cost['prompt_tokens']:,} prompt tokens read; {len(kept)} of "
        f"them read their contexts from kept states ({cost['restored_prompt_tokens']:,} tokens "
        "not read again)"
    )
    run_id = written["run"]["id"]
    shown = run("runs", "show", run_id)
    assert shown.exit_code == 0, shown.output
    assert f"its cost: {line}" in words(shown.stdout)
    page = run("report", out, "-f", "html")  # the stopped run, from its results.json
    assert page.exit_code == 0, page.output
    assert f"<dt>comparison cost</dt><dd>{line}" in page.stdout
    # decided again from the stored samples: nothing scored, the cost kept as it was
    again = run("evaluate", new, *FAITHFULNESS, "--baseline", "latest", "--until-decided")
    assert again.exit_code == 1, again.output
    shown_again = run("runs", "show", run_id, "-o", tmp_path / "again.json")
    assert shown_again.exit_code == 0, shown_again.output
    assert results(tmp_path / "again.json")["run"]["until_decided"]["cost"] == cost


def test_any_run_says_what_it_read_from_kept_states(
    tmp_path: Path, judge: RestoringHashJudge
) -> None:
    """Not only a comparison: a plain run of a new answer version says, on stderr, how many
    samples read their contexts from kept states, and the Python call returns it."""
    import localeval

    data = version(tmp_path / "v1.jsonl")
    before = judge.restored_tokens
    done = run("evaluate", data, *FAITHFULNESS)
    assert done.exit_code == 0, done.output
    restored = judge.restored_tokens - before
    rows = [json.loads(line) for line in data.read_text("utf-8").splitlines()]
    kept = sum(any(KEPT_WORD in c for c in row["contexts"]) for row in rows)
    assert 0 < kept < N_SAMPLES and restored > 0
    expected = (
        f"{kept} sample{'s' if kept != 1 else ''} read their contexts from kept states: "
        f"{restored:,} prompt tokens not read again."
    )
    assert expected in words(done.stderr) and expected not in words(done.stdout)
    again = localeval.evaluate(
        version(tmp_path / "v2.jsonl", unsupported=True), ["faithfulness"], progress=False
    )
    assert again.from_states.samples_from_states == kept
    assert again.from_states.restored_prompt_tokens == judge.restored_tokens - before - restored
