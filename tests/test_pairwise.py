"""The pairwise A/B judge: the arithmetic of a verdict, the order-swap rule, reading pair
files, the summary, and the compare-answers command."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakes import RuleJudge, ScriptedJudge
from run_db import Connections
from standins import PROJECT_MODELS, Forbidden, StandIns

from localeval.cli import main
from localeval.config import load_models_config
from localeval.errors import DatasetError, UsageError
from localeval.judge import Prompt
from localeval.metrics import Tools
from localeval.pairwise.judge import PairVerdict, compare_pair
from localeval.pairwise.rows import PairRow, load_pairs, summarize_verdicts

QUESTION = "When was the tower finished?"
CONTEXTS = ["The tower was finished in 1889."]
GOOD = "It was finished in 1889."
BAD = "It was finished in 1925."


def test_verdict_weighs_faithfulness_and_the_direct_comparison() -> None:
    judge = ScriptedJudge(
        [
            0.2,  # A: faithfulness of its one statement
            0.9,  # B: faithfulness
            [0.7, 0.3],  # A shown first: the judge prefers the first answer (A)
            [0.8, 0.2],  # B shown first: prefers the first answer (B)
        ]
    )
    verdict = compare_pair(QUESTION, CONTEXTS, None, BAD, GOOD, Tools(judge=judge))
    judge.assert_done()
    # direct P(B better): 0.3 then 0.8; evidence: 0.9 - 0.2 = 0.7
    # margins: 0.1 * (2 * 0.3 - 1) + 0.9 * 0.7 = 0.59 and 0.1 * 0.6 + 0.63 = 0.69
    assert [o.margin for o in verdict.orders] == pytest.approx([0.59, 0.69])
    assert verdict.winner == "B" and not verdict.flipped
    assert verdict.confidence == pytest.approx(0.59)
    assert verdict.score_b == pytest.approx(0.1 * 0.55 + 0.9 * 0.9)
    assert verdict.score_a == pytest.approx(0.1 * 0.45 + 0.9 * 0.2)
    assert verdict.evidence_b.details["statements"] == [GOOD]
    assert verdict.reason == (
        "B is better supported by the contexts (0.90 vs 0.20); both orders agree"
    )
    # the direct prompts show the answers under A and B in both orders, after the contexts
    first, second = (p.user for p in judge.prompts[2:])
    assert first.index(f"Answer A: {BAD}") < first.index(f"Answer B: {GOOD}")
    assert f"Answer A: {GOOD}" in second and f"Answer B: {BAD}" in second
    assert first.startswith(f"Context:\n{CONTEXTS[0]}")


def test_orders_that_disagree_make_a_tie() -> None:
    # equal evidence, and a judge that always picks whatever is shown first
    judge = ScriptedJudge([0.8, 0.8, [0.9, 0.1], [0.9, 0.1]])
    verdict = compare_pair(QUESTION, CONTEXTS, None, GOOD, BAD, Tools(judge=judge))
    assert verdict.flipped and verdict.winner == "tie" and verdict.confidence == 0.0
    assert [o.winner for o in verdict.orders] == ["A", "B"]
    assert verdict.reason == "the verdict changed when the answers were shown in the other order"


def test_without_contexts_the_evidence_is_answering_the_question() -> None:
    judge = ScriptedJudge([0.3, 0.9, [0.4, 0.6], [0.6, 0.4]])
    verdict = compare_pair(QUESTION, [], None, BAD, GOOD, Tools(judge=judge))
    judge.assert_done()
    assert verdict.evidence_a.measure == "answers_question" and verdict.winner == "B"
    assert judge.prompts[0].user.endswith(
        "Does this answer fully answer the question? Answer Yes or No."
    )
    assert "Context:" not in judge.prompts[-1].user
    assert verdict.reason.startswith("B is more likely to fully answer the question (0.90 vs 0.30)")


def test_an_answer_without_statements_has_no_support() -> None:
    judge = ScriptedJudge([0.9, [0.5, 0.5], [0.5, 0.5]])  # only B's sentence is asked about
    verdict = compare_pair(QUESTION, CONTEXTS, None, "...", GOOD, Tools(judge=judge))
    judge.assert_done()
    assert verdict.evidence_a.value == 0.0 and verdict.winner == "B"
    assert verdict.evidence_a.details == {"note": "the answer has no statements"}


def hashed(text: str, salt: str) -> float:
    return int(hashlib.sha256((salt + text).encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def arbitrary_judge(salt: str, first_bias: float) -> RuleJudge:
    """A judge whose every reply is a fixed but arbitrary function of the prompt's text,
    with a preference of `first_bias` for whichever answer is shown first."""

    def choose(prompt: Prompt, options: Sequence[str]) -> list[float]:
        first = min(1.0, max(0.0, first_bias + 0.3 * (hashed(prompt.user, salt) - 0.5)))
        return [first, 1.0 - first]

    return RuleJudge(lambda prompt: hashed(prompt.user, salt), choose)


@pytest.mark.parametrize("salt", [f"s{i}" for i in range(40)])
@pytest.mark.parametrize("first_bias", [0.5, 0.8, 0.95])
def test_swapping_a_and_b_only_mirrors_the_verdict(salt: str, first_bias: float) -> None:
    tools = Tools(judge=arbitrary_judge(salt, first_bias))
    answers = (f"The tower was finished in 1889, {salt}.", f"Maybe 1925. Or later, {salt}.")
    forward = compare_pair(QUESTION, CONTEXTS, None, answers[0], answers[1], tools)
    backward = compare_pair(QUESTION, CONTEXTS, None, answers[1], answers[0], tools)
    mirror = {"A": "B", "B": "A", "tie": "tie"}
    assert backward.winner == mirror[forward.winner]
    assert backward.flipped == forward.flipped
    assert backward.confidence == pytest.approx(forward.confidence)
    assert (backward.score_a, backward.score_b) == pytest.approx((forward.score_b, forward.score_a))


def test_identical_answers_tie_whatever_the_judge() -> None:
    for salt in ("x", "y", "z"):
        tools = Tools(judge=arbitrary_judge(salt, 0.7))
        assert compare_pair(QUESTION, CONTEXTS, None, GOOD, GOOD, tools).winner == "tie"


def test_a_judge_that_only_follows_position_gives_only_ties() -> None:
    always_first = RuleJudge(lambda _p: 0.5, lambda _p, _o: [0.99, 0.01])
    verdict = compare_pair(QUESTION, CONTEXTS, None, GOOD, BAD, Tools(judge=always_first))
    assert verdict.winner == "tie" and verdict.flipped


# -- reading pairs ------------------------------------------------------------------------


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def pair(sample_id: str, label: int | None = None, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": sample_id,
        "question": QUESTION,
        "contexts": CONTEXTS,
        "answer_a": BAD,
        "answer_b": GOOD,
    }
    if label is not None:
        row["label"] = label
    row.update(fields)
    return row


def test_load_pairs_reads_answers_labels_and_other_fields(tmp_path: Path) -> None:
    path = write_rows(
        tmp_path / "p.jsonl",
        [pair("p1", 1, reference="In 1889."), pair("p2", old="x", new="y")],
    )
    rows = load_pairs(path)
    assert rows[0] == PairRow("p1", QUESTION, CONTEXTS, "In 1889.", BAD, GOOD, 1, 1)
    assert rows[1].label is None
    assert load_pairs(path, "answer_b", "answer_a")[0].answer_a == GOOD
    with pytest.raises(DatasetError, match=r"line 1, field 'old': missing"):
        load_pairs(path, "old", "new")
    with pytest.raises(UsageError, match="'question' is the sample's question"):
        load_pairs(path, "question", "answer_b")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (pair("p", answer_b=None), "line 1, field 'answer_b': missing"),
        (pair("p", answer_a=3), "line 1, field 'answer_a': must be a string"),
        (pair("p", answer_a=" "), "line 1, field 'answer_a': is empty"),
        (pair("p", label=2), "line 1, field 'label': must be +1 (B better)"),
    ],
)
def test_bad_pair_rows_name_line_and_field(tmp_path: Path, row: Any, message: str) -> None:
    if row.get("answer_b", "") is None:
        del row["answer_b"]
    path = write_rows(tmp_path / "p.jsonl", [row])
    with pytest.raises(DatasetError) as error:
        load_pairs(path)
    assert message in str(error.value)


# -- summary ------------------------------------------------------------------------------


def fake_verdict(winner: str, flipped: bool = False) -> PairVerdict:
    from localeval.pairwise.judge import AnswerEvidence, OrderReading

    reading = OrderReading("A", 0.5, 0.0, "A")
    evidence = AnswerEvidence("answers_question", 0.5)
    return PairVerdict(
        winner,
        0.1,
        0.5,
        0.5,
        "r",
        flipped,
        (reading, reading),
        evidence,
        evidence,  # type: ignore[arg-type]
    )


def test_summary_win_rate_interval_flips_and_agreement() -> None:
    rows = [PairRow(str(i), QUESTION, None, None, "a", "b", 1) for i in range(6)]
    verdicts = [fake_verdict(w) for w in ("B", "B", "B", "A")] + [
        fake_verdict("tie", flipped=True),
        fake_verdict("tie", flipped=True),
    ]
    summary = summarize_verdicts(rows, verdicts)
    assert (summary.wins_b, summary.wins_a, summary.ties, summary.flipped) == (3, 1, 2, 2)
    assert summary.win_rate_b == pytest.approx(4 / 6)
    assert summary.ci95 is not None and summary.ci95[0] < 4 / 6 < summary.ci95[1]
    assert summary.agreed == 3 and summary.agreement() == pytest.approx(0.5)
    assert not summary.b_worse()
    losing = summarize_verdicts(rows * 5, [fake_verdict("A")] * 29 + [fake_verdict("B")])
    assert losing.ci95 is not None and losing.ci95[1] < 0.5 and losing.b_worse()


# -- the command line ---------------------------------------------------------------------


def prefers(text: str) -> RuleJudge:
    """A judge that likes answers containing `text`, wherever they are shown."""

    def choose(prompt: Prompt, options: Sequence[str]) -> list[float]:
        shown_a = prompt.user.split("Answer A: ")[1].split("\n\nAnswer B: ")[0]
        return [0.8, 0.2] if text in shown_a else [0.2, 0.8]

    return RuleJudge(lambda _prompt: 0.5, choose)


def use_judge(stand_ins: StandIns, judge: Any) -> None:
    stand_ins.use(judge)


@pytest.mark.both_stores
def test_cli_compare_answers_table_summary_and_json(
    stand_ins: StandIns, tmp_path: Path, opened_connections: Connections
) -> None:
    use_judge(stand_ins, prefers("1889"))
    data = write_rows(tmp_path / "p.jsonl", [pair("p1", 1), pair("p2", -1)])
    out = tmp_path / "verdicts.json"
    result = CliRunner().invoke(
        main, ["compare-answers", str(data), "-o", str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "B over A: win rate 1.000" in result.output
    assert "Order flips: 0 of 2 rows" in result.output
    assert "Agreement with labels: 1 of 2 (50.0%)" in result.output
    report = json.loads(out.read_text("utf-8"))
    assert report["summary"]["wins_b"] == 2 and report["summary"]["flipped"] == 0
    row = report["rows"][0]
    assert row["winner"] == "B" and row["agrees_with_label"] is True
    assert [o["shown_first"] for o in row["orders"]] == ["A", "B"]
    assert report["run"]["judge"]["name"] == "rules" and report["run"]["usage"]["judge_calls"] > 0
    # the set the judge was asked with: the stand-in plays the project's default judge
    default = load_models_config(PROJECT_MODELS).judge().prompts
    assert report["run"]["prompt_version"] == default
    assert len(opened_connections) == 1 and opened_connections.still_open() == []


def test_cli_fail_if_b_worse_exits_1_only_when_the_interval_is_below_half(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    data = write_rows(tmp_path / "p.jsonl", [pair(f"p{i}") for i in range(8)])
    use_judge(stand_ins, prefers("1925"))  # A holds 1925: A wins every row
    args = ["compare-answers", str(data), "--no-progress"]
    assert CliRunner().invoke(main, args).exit_code == 0
    gated = CliRunner().invoke(main, [*args, "--fail-if-b-worse"])
    assert gated.exit_code == 1, gated.output
    assert "Gate --fail-if-b-worse: FAIL" in gated.output
    use_judge(stand_ins, prefers("1889"))
    passing = CliRunner().invoke(main, [*args, "--fail-if-b-worse"])
    assert passing.exit_code == 0 and "Gate --fail-if-b-worse: PASS" in passing.output


def test_cli_bad_pairs_exit_2_before_loading_the_judge(stand_ins: StandIns, tmp_path: Path) -> None:
    stand_ins.forbid("the judge must not be loaded")
    data = write_rows(tmp_path / "p.jsonl", [pair("p1", answer_b=None)])
    del_b = json.loads(data.read_text())
    del del_b["answer_b"]
    write_rows(data, [del_b])
    result = CliRunner().invoke(main, ["compare-answers", str(data)])
    assert result.exit_code == 2
    assert result.output == f"Error: {data}, line 1, field 'answer_b': missing\n"
    same = CliRunner().invoke(main, ["compare-answers", str(data), "--b-field", "answer_a"])
    assert same.exit_code == 2
    assert "--a-field and --b-field are both 'answer_a'" in same.output


def test_calibrate_scores_pairwise_rows_with_the_ab_judge(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    stand_ins.use(prefers("1889"), Forbidden("nothing asked here needs the embedder"))
    rows = [pair("p1", 1, metric="pairwise"), pair("p2", -1, metric="pairwise")]
    data = write_rows(tmp_path / "bench.pairwise.jsonl", rows)
    out = tmp_path / "calibration.json"
    result = CliRunner().invoke(main, ["calibrate", str(data), "-o", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    # the judge is loaded (once) for pairwise rows alone: faithfulness needs no embedder
    assert (stand_ins.judge.loads, stand_ins.embedder.loads) == (1, 0)
    report = json.loads(out.read_text("utf-8"))
    assert [r["score"] for r in report["rows"]] == [1.0, 1.0]  # B holds 1889 in both rows
    (agreement,) = report["agreements"]
    assert agreement["metric"] == "pairwise" and agreement["value"] == pytest.approx(0.5)
