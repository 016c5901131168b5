"""Agreement with labels: the statistics and the calibrate command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from fakes import ScriptedJudge
from run_db import Connections
from standins import PROJECT_MODELS, StandIns

from localeval.calibration.agreement import Calibration, agreements_for, suggested_thresholds
from localeval.calibration.rows import RowScore, chunk_labels_of
from localeval.cli import main
from localeval.config import load_models_config
from localeval.data.samples import load_samples
from localeval.stats import (
    BinaryScores,
    balanced_accuracy,
    best_threshold,
    bootstrap_cells,
    bootstrap_statistic,
    bootstrap_statistics,
    pair_accuracy,
    roc_auc,
    spearman,
)


def test_roc_auc_and_spearman_match_definitions() -> None:
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == pytest.approx(0.75)
    assert roc_auc([0.5, 0.5], [0, 1]) == pytest.approx(0.5)  # a tie counts half
    assert roc_auc([0.2, 0.3], [1, 1]) is None
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert spearman([1, 1, 1], [1, 2, 3]) is None
    assert pair_accuracy([0.9, 0.5, 0.4], [0.1, 0.5, 0.6]) == pytest.approx(0.5)


def test_gate_figures_of_a_resample_are_those_of_its_rows_by_their_definitions() -> None:
    """BinaryScores counts a resample per distinct score instead of sorting it: its figures
    are those of the resampled rows, checked against the definitions pair by pair and gate
    by gate."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        n = int(rng.integers(2, 40))
        s, y = np.round(rng.random(n), 1), rng.integers(0, 2, n)
        drawn = rng.integers(0, n, n)
        ds, dy = s[drawn], y[drawn]
        positives, negatives = ds[dy == 1], ds[dy == 0]
        rows = BinaryScores(s, y)
        if not positives.size or not negatives.size:
            assert rows.roc_auc(drawn) is None and rows.best_gate(drawn) is None
            continue
        pairs = [(p > q) + 0.5 * (p == q) for p in positives for q in negatives]
        assert rows.roc_auc(drawn) == pytest.approx(sum(pairs) / len(pairs), abs=1e-12)

        values = np.unique(ds)
        gates = [values[0], *((values[:-1] + values[1:]) / 2)]
        best = max(gates, key=lambda g: (_accuracy(positives, negatives, g), -g))
        found = (best, _accuracy(positives, negatives, best))
        assert rows.best_gate(drawn) == pytest.approx(found, abs=1e-12)
        at = _accuracy(positives, negatives, 0.45)
        assert rows.balanced_accuracy(0.45, drawn) == pytest.approx(at, abs=1e-12)
        assert best_threshold(ds, dy) == rows.best_gate(drawn)[0]


def _accuracy(positives: np.ndarray, negatives: np.ndarray, gate: float) -> float:
    """The balanced accuracy of a gate, by its definition."""
    return float(((positives >= gate).mean() + (negatives < gate).mean()) / 2)


def test_resamples_drawn_once_for_several_figures_or_as_counts_of_kinds() -> None:
    values = np.array([1.0] * 300 + [0.0] * 700)

    def mean(i: np.ndarray) -> float:
        return float(values[i].mean())

    alone = bootstrap_statistic(mean, values.size)
    assert bootstrap_statistics([mean, lambda i: 1 - mean(i)], values.size) == [
        alone,
        pytest.approx((1 - alone[1], 1 - alone[0])),
    ]
    # 700 items of one kind and 300 of another, drawn as counts of each: the same interval
    # but for the draws' chance (2,000 resamples)
    (by_kind,) = bootstrap_cells([lambda counts: float(counts[1] / counts.sum())], [700, 300])
    assert by_kind is not None and alone is not None
    assert by_kind == pytest.approx(alone, abs=0.01)


def rows(*items: tuple[float | None, float | None, Any]) -> list[RowScore]:
    return [RowScore("d", "faithfulness", label, pair, score) for label, score, pair in items]


def test_pairs_are_formed_within_pair_id_and_labels_decide_the_better() -> None:
    found = agreements_for(
        "d",
        "faithfulness",
        rows((1, 0.9, "a"), (0, 0.2, "a"), (0, 0.7, "b"), (1, 0.3, "b"), (1, 0.5, "c")),
    )
    by_measure = {a.measure: a for a in found}
    assert by_measure["pair_accuracy"].value == pytest.approx(0.5)
    assert by_measure["pair_accuracy"].n == 2  # "c" has no partner
    assert by_measure["roc_auc"].n == 5


def test_gate_figures_say_where_a_gate_separates_the_labels() -> None:
    # the judge's scores are compressed: good rows 0.55-0.65, bad rows 0.45-0.56
    scored = [(1, 0.60), (1, 0.65), (1, 0.55), (1, 0.62), (0, 0.50), (0, 0.45), (0, 0.56)]
    found = agreements_for("d", "faithfulness", rows(*((label, s, None) for label, s in scored)))
    by_measure = {a.measure: a for a in found}
    assert by_measure["best_threshold"].value == pytest.approx(0.58)  # between 0.56 and 0.60
    assert by_measure["bal_acc@best"].value == pytest.approx((3 / 4 + 1) / 2)
    # the default gate (0.80) fails every row: no better than a coin
    assert by_measure["bal_acc@0.80"].value == pytest.approx(0.5)
    assert by_measure["best_threshold"].ci95 is not None
    # context_relevance rows are scored by context precision, and gated at its default
    relevance = [RowScore("w", "context_relevance", label, None, s) for label, s in scored]
    assert "bal_acc@0.65" in {
        a.measure for a in agreements_for("w", "context_relevance", relevance)
    }


def test_best_threshold_and_balanced_accuracy() -> None:
    assert best_threshold([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]) == pytest.approx(0.5)
    assert balanced_accuracy([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], 0.5) == 1.0
    assert balanced_accuracy([0.1, 0.9], [1, 0], 0.5) == 0.0
    assert best_threshold([0.3, 0.4], [1, 1]) is None
    assert balanced_accuracy([0.3], [0], 0.5) is None


def test_suggested_thresholds_pool_datasets_of_a_judged_metric_with_0_1_labels() -> None:
    def row(dataset: str, metric: str, label: float, score: float) -> RowScore:
        return RowScore(dataset, metric, label, None, score)

    calibration = Calibration(
        [],
        [
            # two faithfulness sets: pooled, the line falls between 0.5 and 0.6
            row("a", "faithfulness", 1, 0.6),
            row("a", "faithfulness", 0, 0.5),
            row("b", "faithfulness", 1, 0.7),
            row("b", "faithfulness", 0, 0.4),
            # graded labels: no pass/fail line
            row("g", "answer_relevancy", 0.5, 0.6),
            row("g", "answer_relevancy", 1, 0.7),
            row("g", "answer_relevancy", 0, 0.1),
            # context precision is the embedder's score, not on the judge's scale
            row("w", "context_relevance", 1, 0.9),
            row("w", "context_relevance", 0, 0.2),
        ],
    )
    assert suggested_thresholds(calibration) == {"faithfulness": 0.55}


def test_graded_labels_get_spearman() -> None:
    found = agreements_for(
        "d",
        "faithfulness",
        rows((0.1, 0.2, None), (0.5, 0.4, None), (0.9, 0.8, None), (0.7, 0.9, None)),
    )
    assert [a.measure for a in found] == ["spearman"]
    assert found[0].value == pytest.approx(0.8)


def test_chunk_auc_uses_every_chunk() -> None:
    row = RowScore("w", "context_precision", None, None, 0.5, [0.9, 0.1, 0.6], [1, 0, 0])
    row2 = RowScore("w", "context_precision", None, None, 0.5, [0.2, 0.8], [0, 1])
    (chunk,) = agreements_for("w", "context_precision", [row, row2])
    assert chunk.measure == "chunk_auc" and chunk.n == 5
    assert chunk.value == pytest.approx(1.0)


def test_undefined_and_unparseable_are_counted() -> None:
    result = Calibration(
        [],
        [
            RowScore("d", "m", 1, None, None),
            RowScore("d", "m", 0, None, 0.3),
            RowScore("d", "m", 1, None, unparseable=True),
        ],
    )
    assert result.counts() == {("d", "m"): {"rows": 3, "undefined": 2, "unparseable": 1}}


def test_calibrate_command_on_a_labelled_file(
    tmp_path: Path, stand_ins: StandIns, opened_connections: Connections
) -> None:
    base = {"question": "Q?", "contexts": ["c1"], "metric": "faithfulness", "dataset": "mini"}
    lines = [
        {**base, "id": "1", "answer": "Right.", "label": 1, "pair_id": 1},
        {**base, "id": "2", "answer": "Wrong.", "label": 0, "pair_id": 1},
        {**base, "id": "3", "answer": "Right again.", "label": 1, "pair_id": 2},
        {**base, "id": "4", "answer": "Wrong again.", "label": 0, "pair_id": 2},
    ]
    path = tmp_path / "labelled.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    judge = ScriptedJudge([0.9, 0.2, 0.4, 0.6])
    stand_ins.use(judge)
    out = tmp_path / "calib.json"
    result = CliRunner().invoke(main, ["calibrate", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    judge.assert_done()
    table = result.stdout.splitlines()
    assert table[1].split()[:4] == ["mini", "faithfulness", "pair_accuracy", "0.500"]
    assert (
        "Gate thresholds on this judge's scale (best_threshold over all rows of each metric),\n"
        'for models.toml:\n[judges."scripted".thresholds]\nfaithfulness = 0.30\n'
    ) in result.stdout
    report = json.loads(out.read_text())
    assert report["suggested_thresholds"] == {"faithfulness": 0.3}
    assert report["prompt_version"] == load_models_config(PROJECT_MODELS).judge().prompts
    measures = {a["measure"]: a["value"] for a in report["agreements"]}
    assert measures == {
        "pair_accuracy": 0.5,
        "roc_auc": 0.75,
        "best_threshold": pytest.approx(0.3),  # passes both right answers, fails one wrong
        "bal_acc@best": 0.75,
        "bal_acc@0.80": 0.75,  # the default gate passes 0.9 only
    }
    assert report["counts"] == [
        {"dataset": "mini", "metric": "faithfulness", "rows": 4, "undefined": 0, "unparseable": 0}
    ]
    assert len(opened_connections) == 1 and opened_connections.still_open() == []


def test_calibrate_rejects_rows_without_metric(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps({"question": "Q", "label": 1}) + "\n")
    result = CliRunner().invoke(main, ["calibrate", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {path}, line 1, field 'metric': missing: a labelled row names the metric "
        "it tests\n"
    )


def test_calibrate_reads_a_csv_files_labels_as_numbers(tmp_path: Path) -> None:
    """Every CSV cell is text: a `label` of "1" and `context_labels` of "[1, 0]" are the
    numbers they say (calibrate refused "1" as not a number); a word is still refused."""
    header = "metric,dataset,question,answer,reference_answer,label\n"
    rows = (
        "rouge_l,mini,Q1?,It is blue.,It is blue., 1\nrouge_l,mini,Q2?,It is red.,It is blue.,0\n"
    )
    path, out = tmp_path / "labelled.csv", tmp_path / "c.json"
    path.write_text(header + rows, encoding="utf-8")
    result = CliRunner().invoke(main, ["calibrate", str(path), "--no-cache", "-o", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert [(r["label"], r["score"]) for r in report["rows"]] == [(1.0, 1.0), (0.0, 2 / 3)]
    chunked = tmp_path / "chunks.csv"
    chunked.write_text(
        'metric,question,contexts,answer,label,context_labels\ncontext_precision,Q?,"[""c1"", '
        '""c2""]",A.,1,"[1, 0]"\n',
        encoding="utf-8",
    )
    loaded = load_samples(chunked)
    assert chunk_labels_of(loaded[0], "chunks") == [1, 0]
    path.write_text(header + "rouge_l,mini,Q1?,It is blue.,It is blue.,yes\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["calibrate", str(path), "--no-cache"])
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {path}, line 2, field 'label': must be a number, got 'yes'\n",
    )
