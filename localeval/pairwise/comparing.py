"""`localeval compare-answers` as a library call: every pair of a data file judged, B's
record against A summarised; nothing printed."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from localeval.config import load_models_config
from localeval.database import Location, database_files, default_db_path
from localeval.errors import PromptTooLongError, UsageError, param
from localeval.estimate.counting import Counting, Estimate
from localeval.judge import Usage
from localeval.metrics import Tools, build_metric
from localeval.pairwise.judge import PairVerdict, compare_pair
from localeval.pairwise.rows import (
    PairRow,
    PairwiseSummary,
    load_pairs,
    summarize_verdicts,
    verdicts_to_dict,
)
from localeval.results.contract import check_output
from localeval.results.output_files import OutputTarget
from localeval.tools import cached_tools

#: what an estimate calls the work of judging the pairs
ESTIMATED_PART = "pairs"


@dataclass(frozen=True)
class PairsRequest:
    """What `localeval compare-answers` was asked to do."""

    data: Path
    output: Path | None = None
    a_field: str = "answer_a"
    b_field: str = "answer_b"
    judge: str | None = None
    models: str | None = None
    use_cache: bool = True
    db: Location | None = None


@dataclass
class PairsOutcome:
    """Every row's verdict (None: too long for the judge), B's record, the judge's work."""

    rows: list[PairRow]
    verdicts: list[PairVerdict | None]
    summary: PairwiseSummary
    usage: Usage
    tools: Tools

    def as_dict(self, dataset: str) -> dict[str, Any]:
        """The verdicts file (--output)."""
        return verdicts_to_dict(
            dataset, self.tools, self.rows, self.verdicts, self.summary, self.usage
        )


class PairComparison:
    """Checked when made (the fields, every row, the output folder, models.toml), before
    the judge loads; `run()` judges the pairs."""

    def __init__(self, request: PairsRequest):
        if request.a_field == request.b_field:
            raise UsageError(
                f"{param('a_field')} and {param('b_field')} are both '{request.a_field}'; name "
                "two fields"
            )
        self.request = request
        self.rows = load_pairs(request.data, request.a_field, request.b_field)
        self.models = load_models_config(request.models)
        if request.judge is not None:  # an unknown name before the cache's database is made
            self.models.judge(request.judge)
        self.output: OutputTarget | None = None
        if request.output is not None:
            inputs = [(request.data, "the data file"), (self.models.source, "the models file")]
            db = database_files(request.db or default_db_path())
            self.output = check_output(request.output, inputs + db)

    def run(self, on_row: Callable[[], None] | None = None) -> PairsOutcome:
        request = self.request
        # the judge asks faithfulness questions of each answer, and nothing needs the embedder
        asks = [build_metric("faithfulness")]
        with cached_tools(
            self.models, asks, request.judge, use_cache=request.use_cache, db=request.db
        ) as tools:
            assert tools.judge is not None
            started = time.perf_counter()
            before = tools.judge.usage.snapshot()
            verdicts = [self._verdict(row, tools, on_row) for row in self.rows]
            usage = tools.judge.usage - before
        usage.seconds = time.perf_counter() - started
        judged = [(r, v) for r, v in zip(self.rows, verdicts, strict=True) if v is not None]
        summary = summarize_verdicts(
            [r for r, _ in judged], [v for _, v in judged], n_undefined=len(self.rows) - len(judged)
        )
        return PairsOutcome(self.rows, verdicts, summary, usage, tools)

    def estimate(self, measure: bool = True) -> Estimate:
        """What `run()` will cost, counted without judging (localeval.estimate.counting); a
        judge whose speed here is not kept yet is measured when `measure`."""
        request = self.request
        with Counting(
            self.models,
            [build_metric("faithfulness")],
            request.judge,
            None,
            request.db,
            request.use_cache,
            [ESTIMATED_PART],
            ("pair", "step"),
        ) as counting:
            for number, row in enumerate(self.rows, start=1):
                judge_row = partial(self._verdict, row, counting.tools, None)
                counting.count(str(number), ESTIMATED_PART, judge_row)
            return counting.estimate(measure)

    @staticmethod
    def _verdict(
        row: PairRow, tools: Tools, on_row: Callable[[], None] | None
    ) -> PairVerdict | None:
        """One row's verdict; None when it is too long for the judge."""
        try:
            return compare_pair(
                row.question, row.contexts, row.reference, row.answer_a, row.answer_b, tools
            )
        except PromptTooLongError:
            return None
        finally:
            if on_row is not None:
                on_row()
