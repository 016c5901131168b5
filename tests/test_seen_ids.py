"""The reader's duplicate-id table stays small in memory however long the file is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.data import seen_ids
from localeval.data.samples import read_samples
from localeval.data.seen_ids import SeenIds
from localeval.errors import DatasetError


def test_ids_beyond_the_bound_move_to_disk_and_are_still_found() -> None:
    seen = SeenIds(in_memory=10)
    for i in range(95):
        seen.add(f"s{i}", f"on line {i + 1}")
    assert seen.held_in_memory < 10
    assert seen.first("s3") == "on line 4"  # on disk
    assert seen.first("s94") == "on line 95"  # still in memory
    assert seen.first("s95") is None
    seen.close()
    assert seen.first("s3") is None


def test_a_duplicate_of_a_spilled_id_names_its_first_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seen_ids, "IN_MEMORY", 8)
    rows = [{"sample_id": f"s{i}", "question": "q?", "answer": "a"} for i in range(40)]
    rows.append({"sample_id": "s2", "question": "q?", "answer": "a"})
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    message = r"line 41.*duplicate sample_id 's2' \(first on line 3\)"
    with pytest.raises(DatasetError, match=message):
        list(read_samples(path))
