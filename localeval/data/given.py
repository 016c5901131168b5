"""Samples given in code rather than in a file: a list of dicts or Sample objects, a pandas
DataFrame or a Hugging Face `datasets.Dataset`, with localeval's or Ragas' field names.

They are written to a JSONL file that the evaluation then reads like any data file
(localeval.data.samples), so one reader checks every row. Without `skip_invalid` they are
first checked here, row by row, as the rows of `assert_rag_quality` always were
(`samples_of`: "<samples>, line 2: ..." names row 2), and the file holds the checked
samples; with it, the rows go to the file as given, for the reader to skip and list.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from localeval.data.ids import DefaultIds
from localeval.data.samples import Sample, sample_from_row
from localeval.errors import DatasetError, UsageError

#: how messages and the run history name data given in code, by its kind
LIST_NAME, FRAME_NAME, DATASET_NAME = "<samples>", "<DataFrame>", "<Dataset>"


def samples_of(rows: Iterable[Sample | Mapping[str, Any]], name: str) -> list[Sample]:
    """Samples given in code (Sample objects, or dicts with a data file's fields), each
    checked as a file's row is; `name` stands for the file in messages, row i for line i.
    A row without a sample_id is named as in a file (DefaultIds)."""
    samples: list[Sample] = []
    seen: set[str] = set()
    default_ids = DefaultIds()
    for index, item in enumerate(rows, start=1):
        if isinstance(item, Sample):
            sample = item
        else:
            sample = sample_from_row(item, name, index, default_ids)
        if sample.sample_id in seen:
            raise DatasetError(name, f"duplicate sample_id '{sample.sample_id}'", index)
        seen.add(sample.sample_id)
        samples.append(sample)
    if not samples:
        raise DatasetError(name, "holds no samples")
    return samples


def given_rows(data: object) -> tuple[list[Any], str] | None:
    """The rows of data given in code, and its name; None for a path."""
    if isinstance(data, str | os.PathLike):
        return None
    pandas = sys.modules.get("pandas")  # a DataFrame comes from pandas already imported
    if pandas is not None and isinstance(data, pandas.DataFrame):
        return frame_rows(data, pandas), FRAME_NAME
    datasets = sys.modules.get("datasets")
    if datasets is not None and isinstance(data, datasets.DatasetDict):
        splits = ", ".join(data.keys())
        raise UsageError(f"data is a DatasetDict of splits ({splits}): give one, e.g. data['test']")
    if datasets is not None and isinstance(data, datasets.Dataset):
        return [plain(row) for row in data.to_list()], DATASET_NAME
    if isinstance(data, Mapping):
        raise UsageError(
            "data must be a file path, a list of samples, a pandas DataFrame or a "
            "datasets.Dataset, not a single sample"
        )
    if isinstance(data, Iterable) and not isinstance(data, bytes):
        return list(data), LIST_NAME
    raise UsageError(
        "data must be a file path, a list of samples, a pandas DataFrame or a "
        f"datasets.Dataset, not {type(data).__name__}"
    )


def frame_rows(frame: Any, pandas: Any) -> list[dict[str, Any]]:
    """A DataFrame's rows as plain dicts: numpy arrays as lists (a parquet file's
    contexts), missing cells (NaN, NA) as absent fields."""
    return [
        {str(k): plain(v, pandas) for k, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def plain(value: Any, pandas: Any = None) -> Any:
    """A value as JSON holds it: numpy arrays and scalars as lists and numbers, a missing
    value (NaN, pandas' NA) as None."""
    if isinstance(value, dict):
        return {str(k): plain(v, pandas) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v, pandas) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str):
        return plain(value.tolist(), pandas)
    if isinstance(value, float) and math.isnan(value):
        return None
    if pandas is not None and pandas.api.types.is_scalar(value) and pandas.isna(value):
        return None
    return value


def write_given(rows: list[Any], name: str, path: Path, skip_invalid: bool) -> None:
    """Write data given in code to the JSONL file `path`, checked first unless
    `skip_invalid` (then the reader skips and lists its invalid rows)."""
    if skip_invalid:
        records = [_record(row) if isinstance(row, Sample) else row for row in rows]
    else:
        records = [_record(sample) for sample in samples_of(rows, name)]
    with path.open("w", encoding="utf-8") as out:
        for line, record in enumerate(records, start=1):
            try:
                text = json.dumps(record, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise DatasetError(
                    name, f"holds a value that is not plain data ({exc})", line
                ) from None
            out.write(text + "\n")


def _record(sample: Sample) -> dict[str, Any]:
    """A checked sample as a data file's row."""
    row: dict[str, Any] = {
        "sample_id": sample.sample_id,
        "question": sample.question,
        "contexts": sample.contexts,
        "answer": sample.answer,
        "reference_answer": sample.reference_answer,
        "category": sample.category,
    }
    return {k: v for k, v in row.items() if v is not None} | sample.extra
