"""Calibrated verdicts: fitting a map, measuring it on held-out rows, storing it in
models.toml, and every score that is made of judge verdicts reading through it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from fakes import ScriptedJudge
from standins import JUDGE, StandIns

from localeval.calibration.fit import fit_maps
from localeval.calibration.models_file import (
    calibration_toml,
    save_calibration,
    without_calibration,
)
from localeval.calibration.rows import RowScore
from localeval.cli import main
from localeval.config import load_models_config
from localeval.data.samples import Sample
from localeval.errors import ConfigError
from localeval.history.records import fingerprint
from localeval.metrics import Tools, build_metric, spec
from localeval.results.calibration import calibration_sentence, calibration_status
from localeval.results.diff import comparability_warnings
from localeval.results.model import RunInfo
from localeval.verdict_maps import (
    VerdictMap,
    expected_calibration_error,
    fit_map,
    logit,
    reliability,
    sigmoid,
)

# -- the map ---------------------------------------------------------------------------------


def synthetic_rows(a: float, b: float, n: int = 400) -> list[tuple[list[float], float]]:
    """Single-verdict rows whose labels follow p' = sigmoid(a logit(p) + b) exactly."""
    raw = np.linspace(0.3, 0.8, n)
    truth = sigmoid(a * logit(raw) + b)
    return [([float(p)], float(t)) for p, t in zip(raw, truth, strict=True)]


def test_a_map_is_recovered_from_rows_that_follow_it() -> None:
    fitted = fit_map("supported", synthetic_rows(4.0, -1.5))
    # within the weak pull towards the identity map that keeps separable fits finite
    assert fitted.a == pytest.approx(4.0, rel=0.02)
    assert fitted.b == pytest.approx(-1.5, rel=0.02)
    assert fitted.apply(0.5) == pytest.approx(float(sigmoid(fitted.b)))


def test_rows_a_verdict_separates_perfectly_still_give_a_finite_map() -> None:
    fitted = fit_map("supported", [([0.7], 1.0), ([0.4], 0.0)] * 12)
    assert 1 < fitted.a < 20
    assert fitted.apply(0.7) > 0.9 and fitted.apply(0.4) < 0.1


def test_a_map_is_monotone_and_fits_rows_of_several_verdicts() -> None:
    # two-statement rows: label 1 when both are supported, 0.5 when one is, 0 when none
    rows = [([0.7, 0.72], 1.0), ([0.71, 0.45], 0.5), ([0.44, 0.46], 0.0)] * 20
    fitted = fit_map("supported", rows)
    assert fitted.a > 0
    assert fitted.apply(0.72) > 0.9 and fitted.apply(0.44) < 0.1
    values = [fitted.apply(p) for p in np.linspace(0.01, 0.99, 50)]
    assert values == sorted(values)


def test_a_map_needs_two_labels() -> None:
    with pytest.raises(ValueError, match="at least two different labels"):
        fit_map("supported", [([0.6], 1.0), ([0.7], 1.0)])


def test_calibration_error_and_reliability_bins() -> None:
    assert expected_calibration_error([0.05, 0.95], [0.0, 1.0]) == pytest.approx(0.05)
    assert expected_calibration_error([0.9, 0.9], [0.0, 0.0]) == pytest.approx(0.9)
    bins = reliability([0.05, 0.07, 0.95], [0.0, 1.0, 1.0])
    assert [(b.low, b.n) for b in bins] == [(0.0, 2), (0.9, 1)]
    assert bins[0].mean_label == pytest.approx(0.5)


def row(dataset: str, verdicts: list[float], label: float, pair: object = None) -> RowScore:
    found = RowScore(dataset, "faithfulness", label, pair, float(np.mean(verdicts)))
    found.verdict_kind, found.verdicts = "supported", verdicts
    return found


def test_fitted_maps_are_measured_on_datasets_left_out() -> None:
    rows = []
    for dataset, shift in (("one", 0.0), ("two", 0.02), ("three", -0.02)):
        for i in range(30):
            rows += [row(dataset, [0.62 + shift], 1.0, i), row(dataset, [0.48 + shift], 0.0, i)]
    fits = fit_maps(rows)
    fit = fits["supported"]
    assert fit.scheme == "by dataset"
    assert [h.name for h in fit.held_out] == ["one", "three", "two"]
    assert fit.ece < fit.ece_raw  # the raw verdicts sit around 0.5: badly calibrated
    assert fit.map.ece == pytest.approx(fit.ece)
    assert fit.map.fitted_on == "one (60 rows), three (60 rows), two (60 rows)"
    assert sum(b.n for b in fit.bins) == 180


def test_one_dataset_is_measured_by_folds_of_its_pairs() -> None:
    rows = [r for i in range(20) for r in (row("solo", [0.7], 1.0, i), row("solo", [0.4], 0, i))]
    fit = fit_maps(rows)["supported"]
    assert fit.scheme == "5 folds of solo"
    assert [h.rows for h in fit.held_out] == [8, 8, 8, 8, 8]  # pairs stay together


def test_chunk_verdicts_are_fitted_against_each_chunks_label() -> None:
    rows = []
    for _ in range(10):
        found = RowScore("rgb", "context_precision", None, None, 0.5, chunk_labels=[1, 0, 0])
        found.verdict_kind, found.verdicts = "useful", [0.9, 0.6, 0.2]
        rows.append(found)
    fit = fit_maps(rows)["useful"]
    assert fit.scheme == "5 folds of rgb"
    assert [h.rows for h in fit.held_out] == [6, 6, 6, 6, 6]  # a row's chunks stay together
    assert fit.map.fitted_on == "rgb (30 chunks)" and fit.unit == "chunks"
    assert fit.ece < fit.ece_raw  # 0.6 said for chunks that are never useful


# -- models.toml -------------------------------------------------------------------------------

MAP = VerdictMap("supported", 2.5, -0.75, "halueval (10 rows)", 0.04, ((0.0, 0.1, 3, 0.05, 0.0),))


def test_calibration_tables_are_read_from_a_judges_entry(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(
        f'[judges."j"]\nbackend = "{JUDGE}"\n\n' + calibration_toml("j", {"supported": MAP})
    )
    assert load_models_config(models).judge("j").calibration == {"supported": MAP}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            '[judges."j".calibration.sure]\na = 1\nb = 0\n',
            "[judges.j.calibration]: unknown kind of verdict 'sure' (known: answers, "
            "supported, useful)",
        ),
        (
            '[judges."j".calibration.supported]\na = 1\n',
            "[judges.j.calibration.supported]: needs a and b (p' = sigmoid(a * logit(p) + b))",
        ),
        (
            '[judges."j".calibration.supported]\na = -1\nb = 0\n',
            "[judges.j.calibration.supported]: 'a' must be above 0, got -1.0",
        ),
        (
            '[judges."j".calibration.supported]\na = 1\nb = 0\nwhen = 3\n',
            "[judges.j.calibration.supported]: unknown setting(s) when",
        ),
    ],
)
def test_bad_calibration_tables_are_refused(tmp_path: Path, table: str, message: str) -> None:
    models = tmp_path / "models.toml"
    models.write_text(f'[judges."j"]\nbackend = "{JUDGE}"\n' + table)
    with pytest.raises(ConfigError) as refused:
        load_models_config(models)
    assert str(refused.value) == f"{models} {message}"


def test_saving_replaces_the_judges_maps_and_keeps_the_rest(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    original = (
        "# my models\n"
        f'[judges."j"]\nbackend = "{JUDGE}"  # mine\n\n'
        '[judges."j".calibration.supported]\na = 9\nb = 9\n\n'
        f'[judges."k"]\nbackend = "{JUDGE}"\n'
    )
    models.write_text(original)
    assert without_calibration(original, "j")[0] == original.replace(
        '[judges."j".calibration.supported]\na = 9\nb = 9\n\n', ""
    )
    save_calibration(models, "j", {"supported": MAP})
    text = models.read_text()
    assert text.startswith("# my models\n")
    assert "a = 9" not in text and '[judges."k"]' in text
    assert load_models_config(models).judge("j").calibration == {"supported": MAP}
    assert load_models_config(models).judge("k").calibration == {}
    with pytest.raises(ConfigError, match=re.escape('no [judges."nobody"] entry')):
        save_calibration(models, "nobody", {"supported": MAP})


# -- scores read through the map ----------------------------------------------------------------


def sample() -> Sample:
    return Sample(sample_id="s", question="Q?", contexts=["c"], answer="One. Two.")


def test_faithfulness_verdicts_are_calibrated_and_the_raw_ones_kept() -> None:
    judge = ScriptedJudge([0.6, 0.4])
    tools = Tools(judge=judge, calibration={"supported": MAP})
    result = build_metric("faithfulness").score(sample(), tools)
    judge.assert_done()
    assert result.details["support_raw"] == [0.6, 0.4]
    assert result.details["support"] == [round(MAP.apply(0.6), 4), round(MAP.apply(0.4), 4)]
    assert result.details["verdicts"] == ["supported", "unsupported"]  # at 0.5, calibrated
    assert "verdict_threshold" not in result.details
    assert result.score == pytest.approx((MAP.apply(0.6) + MAP.apply(0.4)) / 2)
    assert result.details["verdict_share"] == 0.5  # the verdicts' reading, also calibrated


def test_answer_relevancy_is_calibrated_with_its_own_map() -> None:
    answers = VerdictMap("answers", 3.0, 0.5)
    judge = ScriptedJudge([0.1, 0.7, {"questions": ["a?", "b?", "c?"]}])
    from fakes import FakeEmbedder

    tools = Tools(judge=judge, embedder=FakeEmbedder(), calibration={"answers": answers})
    result = build_metric("answer_relevancy").score(sample(), tools)
    assert result.details["answers_probability_raw"] == 0.7
    assert result.score == pytest.approx(answers.apply(0.7))


def info(judge: dict) -> RunInfo:
    return RunInfo("r", "now", ["faithfulness"], judge, None, dataset_sha256="d")


def test_the_map_is_part_of_what_makes_a_run_the_same_evaluation() -> None:
    plain = {"name": "j", "sha256": "a" * 64}
    mapped = {**plain, "calibration": {"supported": MAP.record()}}
    assert fingerprint(info(plain)) != fingerprint(info(mapped))
    warnings = comparability_warnings({"judge": plain}, {"judge": mapped}, ["faithfulness"])
    assert warnings == [
        "the judge's verdicts were calibrated differently (supported uncalibrated vs "
        "calibrated): its scores are not comparable"
    ]


def test_an_uncalibrated_judge_says_so() -> None:
    status = calibration_status({"name": "j"}, ["faithfulness", "bleu", "answer_relevancy"])
    assert status is not None and status.uncalibrated == ["faithfulness", "answer_relevancy"]
    assert calibration_sentence(status) == (
        "Judge j is not calibrated for faithfulness, answer_relevancy: those scores are the "
        "judge's own confidence, not the share of people who would agree; the mean corrected "
        "by your labels reads on people's scale (`localeval calibrate --fit` fits a map from "
        "labelled rows)."
    )
    mapped = {"name": "j", "calibration": {"supported": {}, "answers": {}}}
    assert calibration_sentence(calibration_status(mapped, ["faithfulness"])).startswith(  # type: ignore[arg-type]
        "Judge j is calibrated"
    )
    assert calibration_status({"name": "j"}, ["bleu"]) is None


def test_chinese_chunks_the_judge_decides_are_calibrated_with_the_useful_map() -> None:
    useful = VerdictMap("useful", 2.0, -1.0)
    judge = ScriptedJudge([0.3, 0.8])  # asked from the last chunk to the first
    sample = Sample(
        sample_id="z", question="宣誓的时间", contexts=["甲。", "乙。"], answer="1月3日"
    )
    result = build_metric("context_precision").score(
        sample, Tools(judge=judge, calibration={"useful": useful})
    )
    judge.assert_done()
    assert result.details["usefulness_raw"] == [0.8, 0.3]
    assert result.details["usefulness"] == [
        round(useful.apply(0.8), 4),
        round(useful.apply(0.3), 4),
    ]
    spec_cp = spec("context_precision")
    assert spec_cp is not None and spec_cp.raw_verdicts(result.details) == [0.8, 0.3]
    # an embedded sample's similarities are no judge verdicts: nothing for calibrate to fit
    assert spec_cp.raw_verdicts({"usefulness_by": "embedder", "usefulness": [0.9]}) is None


def test_context_precision_is_named_uncalibrated_only_where_the_judge_decides() -> None:
    metrics = ["faithfulness", "context_precision"]
    judged = {"context_precision": {"usefulness": "en=embedder zh=judge"}}
    status = calibration_status({"name": "j"}, metrics, judged)
    assert status is not None and status.uncalibrated == metrics
    assert calibration_sentence(status) == (
        "Judge j is not calibrated for faithfulness, context_precision (the chunks of Chinese "
        "samples): those scores are the judge's own confidence, not the share of people who "
        "would agree; the mean corrected by your labels reads on people's scale (`localeval "
        "calibrate --fit` fits a map from labelled rows)."
    )
    embedded = {"context_precision": {"usefulness": "en=embedder zh=embedder"}}
    for settings in (embedded, {}, None):
        status = calibration_status({"name": "j"}, metrics, settings)
        assert status is not None and status.uncalibrated == ["faithfulness"]
    assert calibration_status({"name": "j"}, ["context_precision"], embedded) is None
    mapped = {"name": "j", "calibration": {"useful": {}}}
    status = calibration_status(mapped, ["context_precision"], judged)
    assert status is not None and status.calibrated == ["context_precision"]


# -- the command -----------------------------------------------------------------------------


def labelled(tmp_path: Path) -> list[Path]:
    files = []
    for dataset in ("one", "two"):
        base = {"question": "Q?", "contexts": ["c"], "metric": "faithfulness", "dataset": dataset}
        lines = [{**base, "answer": f"Good {i}.", "label": 1, "pair_id": i} for i in range(6)] + [
            {**base, "answer": f"Bad {i}.", "label": 0, "pair_id": i} for i in range(6)
        ]
        path = tmp_path / f"{dataset}.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
        files.append(path)
    return files


def test_calibrate_fit_prints_the_maps_and_save_writes_them(
    tmp_path: Path, stand_ins: StandIns
) -> None:
    files = labelled(tmp_path)
    good, bad = [0.62, 0.64, 0.6, 0.66, 0.63, 0.61], [0.5, 0.48, 0.52, 0.47, 0.5, 0.49]
    verdicts = [*good, *bad] * 2  # the rows of each file: six good answers, six bad
    stand_ins.use(ScriptedJudge(verdicts))
    result = CliRunner().invoke(main, ["calibrate", *map(str, files), "--fit", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "Calibration map 'supported' (does the context state this statement?" in result.stdout
    assert "expected calibration error on held-out rows (by dataset):" in result.stdout
    assert "    held out one: 12 rows, ECE" in result.stdout
    assert "For models.toml (or run again with --save):" in result.stdout
    entry = load_models_config(stand_ins.models).judge().name
    assert f'[judges."{entry}".calibration.supported]' in result.stdout

    stand_ins.use(ScriptedJudge(verdicts))
    saved = CliRunner().invoke(
        main, ["calibrate", *map(str, files), "--fit", "--save", "--no-cache"]
    )
    assert saved.exit_code == 0, saved.output
    judge = load_models_config(stand_ins.models).judge()
    assert set(judge.calibration) == {"supported"}
    assert judge.calibration["supported"].ece is not None


def test_save_with_no_map_kept_leaves_the_maps_models_toml_holds(
    tmp_path: Path, stand_ins: StandIns
) -> None:
    files = labelled(tmp_path)
    good, bad = [0.62, 0.64, 0.6, 0.66, 0.63, 0.61], [0.5, 0.48, 0.52, 0.47, 0.5, 0.49]
    stand_ins.use(ScriptedJudge([*good, *bad] * 2))
    args = ["calibrate", *map(str, files), "--fit", "--save", "--no-cache"]
    assert CliRunner().invoke(main, args).exit_code == 0
    before = stand_ins.models.read_text(encoding="utf-8")
    # verdicts that say nothing of the labels: no map lowers the error, none is kept
    stand_ins.use(ScriptedJudge([0.5] * 24))
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "No map is kept" in result.stdout
    assert f"{stand_ins.models} is left as it was." in result.stdout
    assert stand_ins.models.read_text(encoding="utf-8") == before


def test_save_without_fit_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["calibrate", str(tmp_path / "x.jsonl"), "--save"])
    assert result.exit_code == 2
    assert result.stderr == "Error: --save writes the maps --fit fits; give --fit too\n"


# -- reports -----------------------------------------------------------------------------------


def results(judge: dict) -> dict:
    return {
        "run": {"id": "r1", "judge": judge, "metrics": ["faithfulness"]},
        "summary": {"faithfulness": {"mean": 0.7, "n": 1, "n_undefined": 0, "ci95": None}},
        "gates": [],
        "samples": [],
    }


def test_the_html_report_shows_the_calibration_and_its_reliability_diagram() -> None:
    from localeval.reports.html import render_html

    mapped = {"name": "j", "calibration": {"supported": MAP.record()}}
    page = render_html(results(mapped))
    assert "<h2>Calibration</h2><p class='muted'>Judge j is calibrated" in page
    assert '<svg class="chart reliability"' in page
    assert "supported (ECE 0.040)" in page and "fitted on halueval (10 rows)" in page
    plain = render_html(results({"name": "j"}))
    # a note, not an alarm: what a person can act on (the corrected means) comes first
    assert "<p class='muted'>Judge j is not calibrated for faithfulness" in plain
    assert "class='low'" not in plain
    assert "chart reliability" not in plain
    # a hand-edited file's odd bins are left out, never drawn
    odd = {"name": "j", "calibration": {"supported": {"reliability": [[0, 1, 3, "x", 2]]}}}
    assert "chart reliability" not in render_html(results(odd))


def test_the_markdown_report_leaves_the_calibration_note_to_the_html_page() -> None:
    """A pull request's summary says what to act on (the corrected means); the judge's own
    scale is the HTML report's note (issue 52: the terminal and Markdown dropped it)."""
    from localeval.reports.markdown import render_markdown

    assert "calibrated" not in render_markdown(results({"name": "j`x"}))


def test_reports_name_the_judged_part_of_context_precision() -> None:
    from localeval.reports.html import render_html
    from localeval.reports.markdown import render_markdown

    run = results({"name": "j"})
    run["run"]["metrics"] = ["context_precision"]
    run["run"]["metric_settings"] = {"context_precision": {"usefulness": "en=embedder zh=judge"}}
    run["summary"] = {"context_precision": run["summary"]["faithfulness"]}
    named = "not calibrated for context_precision (the chunks of Chinese samples)"
    assert named not in render_markdown(run)
    assert named in render_html(run)
    run["run"]["metric_settings"] = {"context_precision": {"usefulness": "en=embedder zh=embedder"}}
    assert "calibrated" not in render_html(run)


# -- prompt sets ---------------------------------------------------------------------------------


def test_a_judge_entry_names_its_prompt_set(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(f'[judges."j"]\nbackend = "{JUDGE}"\nprompts = "rag-3"\n')
    assert load_models_config(models).judge("j").prompts == "rag-3"
    models.write_text(f'[judges."j"]\nbackend = "{JUDGE}"\nprompts = "rag-99"\n')
    with pytest.raises(ConfigError) as refused:
        load_models_config(models)
    assert str(refused.value).startswith(
        f"{models} [judges.j]: unknown prompt set 'rag-99' (known: rag-3"
    )


def test_the_run_records_the_prompt_set_as_its_prompt_version() -> None:
    from localeval.engine import describe_run
    from localeval.prompts.sets import RAG_3

    tools = Tools(judge=ScriptedJudge([]), prompts=RAG_3)
    run = describe_run([build_metric("faithfulness")], tools)
    assert run.prompt_version == "rag-3"


def test_rag_4_asks_each_statement_as_an_answer_to_the_question() -> None:
    from localeval.prompts.sets import RAG_4

    judge = ScriptedJudge([0.9, 0.8])
    tools = Tools(judge=judge, prompts=RAG_4)
    build_metric("faithfulness").score(sample(), tools)
    first, second = judge.prompts
    # everything up to the statement is shared by a sample's statements (kept by the judge)
    assert first.segments[:-1] == second.segments[:-1]
    assert first.segments[-2] == '\n\nQuestion: "Q?"\nAnswer:'
    # the support question ends bare: no "Answer Yes or No." (docs/measurements/judge-quality.md)
    assert first.segments[-1] == ' "One."\n\nIs the answer supported by the context above?'
    judge = ScriptedJudge([0.1, 0.7])
    build_metric("answer_relevancy").score(sample(), Tools(judge=judge, prompts=RAG_4))
    asked = judge.prompts[1]
    assert asked.segments[0] == "Question: Q?\n\n"
    assert asked.segments[-1] == "\n\nDoes the answer above answer the question? Answer Yes or No."


def test_rag_5_asks_chinese_statements_as_rag_3_and_others_as_rag_4() -> None:
    from localeval.prompts.sets import RAG_3, RAG_4, RAG_5

    contexts = ["上下文。"]
    zh = RAG_5.rag.context_says(contexts, "宣誓的时间", "1月3日")
    assert zh == RAG_3.rag.context_says(contexts, "宣誓的时间", "1月3日")
    assert zh.segments[-1] == ' "1月3日"? Answer Yes or No.'
    assert RAG_5.rag.context_says(contexts, "When?", "1889.") == RAG_4.rag.context_says(
        contexts, "When?", "1889."
    )
    # without a question, the statement's own language decides
    assert RAG_5.rag.context_says(contexts, " ", "他来了。") == RAG_3.rag.context_says(
        contexts, "", "他来了。"
    )
    # relevancy is asked as rag-4 asks it, in every language
    judge = ScriptedJudge([0.1, 0.7])
    chinese = Sample(sample_id="z", question="几点？", answer="三点。")
    build_metric("answer_relevancy").score(chinese, Tools(judge=judge, prompts=RAG_5))
    assert judge.prompts[1].segments[0] == "问题： 几点？\n\n"


def test_a_judge_alias_names_an_entry_and_is_listed(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(
        'default_judge = "big"\n[judge_aliases]\nfast = "small"\n'
        '[judges.big]\npath = "b.gguf"\nprompts = "rag-4"\n[judges.small]\npath = "s.gguf"\n'
        '[embedders.e]\npath = "e"\n'
    )
    config = load_models_config(models)
    # the alias resolves to the entry itself, so a run records the entry's own name
    assert config.judge("fast").name == "small"
    assert config.judge().name == "big"
    result = CliRunner().invoke(main, ["models", "--models", str(models)])
    assert result.exit_code == 0
    assert "prompts rag-4; uncalibrated (scores are raw P(Yes))\n" in result.stdout
    assert "prompts rag-3; uncalibrated (scores are raw P(Yes)); also called fast\n" in (
        result.stdout
    )


@pytest.mark.parametrize(
    ("aliases", "message"),
    [
        ('fast = "nope"', "[judge_aliases]: 'fast' must name a [judges] entry, got 'nope'"),
        ('small = "big"', "[judge_aliases]: 'small' is already the name of a [judges] entry"),
    ],
)
def test_bad_judge_aliases_are_refused(tmp_path: Path, aliases: str, message: str) -> None:
    models = tmp_path / "models.toml"
    models.write_text(
        f'[judge_aliases]\n{aliases}\n[judges.big]\npath = "b.gguf"\n'
        '[judges.small]\npath = "s.gguf"\n[embedders.e]\npath = "e"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_models_config(models)
    assert str(caught.value) == f"{models} {message}"


def test_a_map_that_does_not_lower_the_held_out_error_is_not_kept() -> None:
    from localeval.calibration.fit import HeldOut, KindFit
    from localeval.reports.calibration_text import fits_text

    fitted = VerdictMap("supported", 1.2, -0.6, "a (10 rows), b (10 rows)")
    worse = KindFit("supported", fitted, [], ece_raw=0.107, ece=0.117)
    lowered = [HeldOut("a", 10, 0.40, 0.10), HeldOut("b", 10, 0.30, 0.06)]
    better = KindFit("answers", VerdictMap("answers", 2.6, -5.6, "w"), lowered, 0.33, 0.08)
    one_set = KindFit("answers", better.map, [], 0.33, 0.08, scheme="5 folds of wikieval")
    assert not worse.kept and better.kept and not one_set.kept
    assert worse.as_dict()["kept"] is False
    text = fits_text({"supported": worse, "answers": better})
    assert text.count("not kept: on held-out datasets it did not lower the error") == 1
    assert "not kept: it was measured on one labelled dataset only" in fits_text({"a": one_set})


def test_a_map_that_lowers_only_the_pooled_error_is_not_kept() -> None:
    from localeval.calibration.fit import HeldOut, KindFit
    from localeval.reports.calibration_text import fits_text

    # the 1.5B's support map on four bench datasets: pooled 0.102 -> 0.096, because the
    # errors of different datasets cancel, while three of the four got worse
    parts = [
        HeldOut("halueval_qa", 100, 0.176, 0.187),
        HeldOut("rgb_zh", 72, 0.073, 0.139),
        HeldOut("uhgeval_zh", 40, 0.109, 0.273),
        HeldOut("wikieval", 50, 0.297, 0.280),
    ]
    fit = KindFit("supported", VerdictMap("supported", 1.17, -0.74, "4 sets"), parts, 0.102, 0.096)
    assert not fit.kept
    assert fit.as_dict()["kept"] is False
    assert (
        "  not kept: it lowered the error on only 1 of the 4 held-out datasets, so this kind "
        "of verdict stays uncalibrated (its raw P(Yes))"
    ) in fits_text({"supported": fit})
    # lowered on three of four and over them all: kept
    parts[1] = HeldOut("rgb_zh", 72, 0.139, 0.073)
    parts[2] = HeldOut("uhgeval_zh", 40, 0.273, 0.109)
    assert KindFit("supported", fit.map, parts, 0.102, 0.096).kept
