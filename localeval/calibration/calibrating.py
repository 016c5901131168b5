"""`localeval calibrate` as a library call: labelled rows scored with the metric each
names, and the agreement figures; nothing printed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.calibration.agreement import Calibration, calibrate, suggested_thresholds
from localeval.calibration.fit import KindFit, fit_maps
from localeval.calibration.rows import PAIRWISE, SCORED_AS, RowScore, label_of, metric_of
from localeval.closing import Closing
from localeval.config import load_models_config
from localeval.data.samples import Sample, load_samples
from localeval.database import Location, database_files, default_db_path
from localeval.errors import DatasetError, UsageError, param
from localeval.metrics import REGISTRY, build_metric
from localeval.pairwise.judge import compare_sample
from localeval.results.contract import check_output
from localeval.results.output_files import OutputTarget
from localeval.tools import cached_tools


@dataclass(frozen=True)
class CalibrationRequest:
    """What `localeval calibrate` was asked to do."""

    paths: Sequence[Path]
    output: Path | None = None
    limit: int | None = None
    judge: str | None = None
    embedder: str | None = None
    models: str | None = None
    use_cache: bool = True
    db: Location | None = None
    #: score every row with this metric instead of the one it names (a baseline on the
    #: same labels)
    score_with: str | None = None
    #: called with each row that cannot be read (it is left out); None: such a row stops it
    on_invalid: Callable[[DatasetError], None] | None = None


class CalibrationRun(Closing):
    """Every row checked and the models set up when made; `run()` scores the rows. The
    cache's connection stays open until `close()` (or the end of a `with` block)."""

    def __init__(self, request: CalibrationRequest):
        self.rows: list[tuple[str, Sample]] = []
        self.names: set[str] = set()
        for path in request.paths:
            for sample in load_samples(path, request.on_invalid)[: request.limit or None]:
                # every row is checked before any model loads
                self.names.add(metric_of(sample, str(path)))
                label_of(sample, str(path))
                dataset = sample.extra.get("dataset")
                self.rows.append((dataset if isinstance(dataset, str) else path.stem, sample))
        models = load_models_config(request.models)
        self.output: OutputTarget | None = None
        if request.output is not None:
            inputs = [(p, "a labelled file") for p in request.paths]
            inputs += [(models.source, "the models file")]
            db = database_files(request.db or default_db_path())
            self.output = check_output(request.output, inputs + db)
        self.score_with = request.score_with
        if self.score_with is not None:
            if self.score_with not in REGISTRY:
                known = ", ".join(REGISTRY)
                raise UsageError(
                    f"{param('score_with')}: unknown metric '{self.score_with}' (known: {known})"
                )
            self.names = {self.score_with}
        used = [build_metric(SCORED_AS.get(n, n)) for n in self.names if n != PAIRWISE]
        if PAIRWISE in self.names:  # the A/B judge asks faithfulness questions of each answer
            used.append(build_metric("faithfulness"))
        self.models_file = models.source
        #: the models.toml entry of the judge (the maps are saved there)
        self.judge_entry = models.judge(request.judge).name if models.judges else None
        self._open = ExitStack()
        self.tools = self._open.enter_context(
            cached_tools(
                models, used, request.judge, request.embedder, request.use_cache, request.db
            )
        )

    def close(self) -> None:
        """Close the cache's connection (the models' answers stay readable in the result)."""
        self._open.close()

    def run(self, on_row: Callable[[RowScore], None] | None = None) -> Calibration:
        return calibrate(
            self.rows, self.tools, compare=compare_sample, on_row=on_row, score_with=self.score_with
        )

    def suggested(self, result: Calibration) -> dict[str, float]:
        """Gate thresholds on this judge's scale (none without a judge)."""
        return suggested_thresholds(result) if self.tools.judge is not None else {}

    def fit(self, result: Calibration) -> dict[str, KindFit]:
        """Calibration maps for the judge's verdicts, measured on held-out rows."""
        return fit_maps(result.rows) if self.tools.judge is not None else {}

    def as_dict(
        self, result: Calibration, fits: dict[str, KindFit] | None = None
    ) -> dict[str, Any]:
        """The calibration file (--output)."""
        judge = self.tools.judge
        return {
            "judge": judge.identity.record(with_settings=False) if judge else None,
            # the maps and thresholds hold for the judge asked in these words
            "prompt_version": self.tools.prompts.version if judge else None,
            "calibration_maps": [f.as_dict() for f in (fits or {}).values()],
            "agreements": [a.as_dict() for a in result.agreements],
            "suggested_thresholds": suggested_thresholds(result),
            "counts": [{"dataset": d, "metric": m, **c} for (d, m), c in result.counts().items()],
            "rows": [vars(r) for r in result.rows],
        }
