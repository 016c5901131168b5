"""Labels the mean corrected by labels cannot count as they are, through `labels import`:
a sample with only some of its verdicts labelled (kept, not counted, and named with the
verdicts it still needs), and two reviewers who disagree (both kept, their mean counts).
Labels of samples the run does not have and labels outside [0, 1] stop the import
(test_corrected.py::test_bad_label_files_store_nothing)."""

from __future__ import annotations

import json
from pathlib import Path

from corrected_runs import labelled_run, stored_labels, summary_of
from review_runs import run_cli
from standins import StandIns

from localeval.prediction_powered import MIN_LABELLED


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


def test_a_sample_labelled_in_part_is_kept_not_counted_and_named(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    review = labelled_run(stand_ins, tmp_path, 0, n_samples=4)
    sample, verdicts = next(
        (s["sample_id"], [v for v in review.verdicts[s["sample_id"]] if v.metric == "faithfulness"])
        for s in review.samples
        if sum(v.metric == "faithfulness" for v in review.verdicts[s["sample_id"]]) >= 2
    )
    first = verdicts[0]
    row = {"sample_id": sample, "metric": "faithfulness", "verdict": first.index, "label": 1}
    result = run_cli(
        "labels",
        "import",
        _write(tmp_path / "part.jsonl", [row]),
        "--run",
        "latest",
        "--random-sample",
        "--reviewer",
        "ann",
    )
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    rest = ", ".join(str(v.index) for v in verdicts[1:])
    assert (
        f"faithfulness: 1 sample has verdicts still unlabelled, not counted for the mean "
        f"corrected by labels until each is complete: {sample} (verdict"
    ) in said
    assert f"{rest}) (`localeval review {review.run.id}` marks them)" in said
    assert len(stored_labels(review)) == 1  # kept, for calibrate and for later
    entry = summary_of(tmp_path)
    assert entry["labels_not_counted"]["incomplete"] == 1
    assert entry["corrected"] is None and entry["labels_needed"] == MIN_LABELLED


def test_two_reviewers_who_disagree_are_both_kept_and_said(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    review = labelled_run(stand_ins, tmp_path, 2, n_samples=4)
    ann = stored_labels(review)[0]
    row = {
        "sample_id": ann.sample_id,
        "metric": ann.metric,
        "verdict": ann.verdict,
        "label": 1 - ann.label,
        "reviewer": "bo",
    }
    result = run_cli("labels", "import", _write(tmp_path / "bo.jsonl", [row]), "--run", "latest")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert (
        f"{ann.metric}: reviewers disagree on 1 verdict; every label is kept, and their mean "
        "counts as people's verdict"
    ) in said
    both = [
        x
        for x in stored_labels(review)
        if (x.sample_id, x.verdict) == (ann.sample_id, ann.verdict) and x.metric == ann.metric
    ]
    assert sorted((x.reviewer, x.label) for x in both) == sorted(
        [("ann", ann.label), ("bo", 1 - ann.label)]
    )
    assert summary_of(tmp_path, ann.metric)["labels_disagreeing"] == 1
