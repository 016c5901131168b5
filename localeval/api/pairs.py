"""Comparing two answers to each question: `localeval compare-answers` as a call.

    import localeval

    outcome = localeval.compare_answers("pairs.jsonl")  # answer_a and answer_b per row
    outcome.summary.win_rate_b, outcome.summary.b_worse()

`AnswerComparison` is the same work in two steps: made, it checks the fields, every row,
models.toml and the output before the judge loads; `.estimate()` counts what judging will
cost, `.run()` judges and `.write()` writes the verdicts. Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.api.history import DEFAULT_DB, history_location
from localeval.api.models import Db, ModelsFile
from localeval.estimate.counting import Estimate
from localeval.pairwise.comparing import PairComparison, PairsOutcome, PairsRequest
from localeval.pairwise.judge import PairVerdict
from localeval.pairwise.rows import PairRow, PairwiseSummary
from localeval.results.contract import write_json
from localeval.results.output_files import OutputTarget


class AnswerComparison:
    """Which of two answers to each question is better, A or B.

    data: a JSONL, JSON array or CSV file whose rows hold a question, optional contexts and
    reference_answer, and the two answers in `a_field` and `b_field` (an optional label:
    +1 B better, -1 A better, 0 equal). output: where `run()` writes every row's verdict and
    the summary as JSON (never one of the inputs). judge, models: models.toml's entry and
    file; use_cache=False asks the judge afresh; db: the database whose cache answers it.
    """

    def __init__(
        self,
        data: str | os.PathLike[str],
        *,
        output: str | os.PathLike[str] | None = None,
        a_field: str = "answer_a",
        b_field: str = "answer_b",
        judge: str | None = None,
        models: ModelsFile = None,
        use_cache: bool = True,
        db: Db = DEFAULT_DB,
    ) -> None:
        request = PairsRequest(
            Path(data),
            None if output is None else Path(output),
            a_field,
            b_field,
            judge,
            None if models is None else os.fspath(models),
            use_cache,
            None if db is None else history_location(db),
        )
        self._comparison = PairComparison(request)

    @property
    def rows(self) -> list[PairRow]:
        """The pairs read from the data, in its order."""
        return self._comparison.rows

    @property
    def target(self) -> OutputTarget | None:
        """What writing the output will do (`.replaces`: an existing file is replaced);
        None without an output."""
        return self._comparison.output

    def estimate(self, measure: bool = True) -> Estimate:
        """What `run()` will cost, counted without judging: judge calls, prompt tokens,
        what the cache answers, and the time here (`.as_dict()`). A judge whose speed here
        is not kept yet is measured when `measure`."""
        return self._comparison.estimate(measure)

    def write_estimate(self, estimate: Estimate) -> Path | None:
        """The estimate as JSON (`compare-answers --estimate --output`) to the output, and
        where it went (None without an output)."""
        if self.target is None:
            return None
        write_json(self.target, estimate.as_dict())
        return self.target.path

    def run(self, on_row: Callable[[], None] | None = None) -> PairsOutcome:
        """Judge each pair in both orders (a row whose winner changes with the order is a
        tie): `.rows`, `.verdicts` (None for a row too long for the judge), `.summary` (B's
        win rate over A with its 95% interval, `.b_worse()`), `.usage`, `.as_dict()`.
        `on_row` is called as each row is judged. `write(outcome)` writes the output."""
        return self._comparison.run(on_row)

    def write(self, outcome: PairsOutcome) -> None:
        """Every row's verdict and the summary, as JSON, to the output (none: nothing)."""
        if self.target is not None:
            write_json(self.target, outcome.as_dict(str(self._comparison.request.data)))


def compare_answers(
    data: str | os.PathLike[str], *, progress: bool = True, **options: Any
) -> PairsOutcome:
    """Judge which of two answers to each question of `data` is better, as `localeval
    compare-answers` does, and write the verdicts to `output` when given (`options`:
    AnswerComparison's keywords: output, a_field, b_field, judge, models, use_cache, db);
    progress: a tqdm bar."""
    comparison = AnswerComparison(data, **options)
    if progress:
        from tqdm.auto import tqdm

        with tqdm(total=len(comparison.rows), desc="Comparing") as bar:
            outcome = comparison.run(lambda: bar.update(1))
    else:
        outcome = comparison.run()
    comparison.write(outcome)
    return outcome


__all__ = [
    "AnswerComparison",
    "PairRow",
    "PairVerdict",
    "PairsOutcome",
    "PairwiseSummary",
    "compare_answers",
]
