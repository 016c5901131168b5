"""`localeval generate` as a library call: documents read, a test set written and checked.

Everything that can be checked without the models (the question mix, the output folder,
the documents themselves, models.toml) is checked when a `Generation` is made, before any
model loads; `run()` then loads the judge and embedder (behind the cache) and writes the
questions, and `write()` writes them to the output file. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path

from localeval.config import ModelsConfig, load_models_config
from localeval.data.samples import Sample
from localeval.database import Location, database_files, default_db_path
from localeval.errors import UsageError, param
from localeval.estimate.counting import Counting, Estimate
from localeval.metrics import MetricResult, Tools
from localeval.testset.candidates import Events, GenerateResult
from localeval.testset.documents import Skipped
from localeval.testset.output import check_output, named, write_jsonl
from localeval.testset.questions import (
    DEFAULT_MIX,
    GenerateOptions,
    count_testset,
    generate_testset,
    read_corpus,
    split_size,
)
from localeval.tools import cached_tools

DEFAULT_MIX_TEXT = ",".join(f"{k}={v:g}" for k, v in DEFAULT_MIX.items())


def parse_mix(text: str) -> dict[str, float]:
    """--mix's KIND=WEIGHT,... pairs; UsageError for anything else."""
    mix: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        kind, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            mix[kind.strip()] = float(value)
        except ValueError:
            raise UsageError(
                f"{param('mix')} '{text}': give KIND=WEIGHT pairs, e.g. {DEFAULT_MIX_TEXT}"
            ) from None
    return mix


class _Writes:
    """What loading the models asks of a metric, for a test set: the judge writes and checks the
    questions, the embedder spreads the chunks and finds near-duplicates."""

    name = "generate"
    needs = ("question",)
    uses_judge = True
    uses_embedder = True

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        raise NotImplementedError("writing a test set scores no sample")


def generate_tools(
    models: ModelsConfig,
    judge: str | None = None,
    embedder: str | None = None,
    use_cache: bool = True,
    db: Location | None = None,
) -> AbstractContextManager[Tools]:
    """The judge (with its prompt set, thresholds and calibration) and the embedder, behind
    the cache of `db`, whose connection the `with` block holds open."""
    return cached_tools(models, [_Writes()], judge, embedder, use_cache, db)


@dataclass(frozen=True)
class GenerateEstimate:
    """What writing a test set will cost, as two bounds: how many candidates the judge's
    checks reject is known only once it has judged them.

    `fewest`: every candidate passes (one per question); `most`: every candidate fails the
    last of the judge's checks, so each kind tries `attempts_per_question` candidates per
    question (or as many as its chunks give). Embedding the chunks is counted exactly;
    the judge's calls and prompt tokens are counted with its own code for the chunks the
    writer picks with word-hashed vectors (the real embedder's may pick others), and its
    generated tokens for typical replies.
    """

    fewest: Estimate
    most: Estimate


@dataclass(frozen=True)
class GenerateRequest:
    """What `localeval generate` was asked to do."""

    docs: Sequence[Path]
    output: Path
    options: GenerateOptions = field(default_factory=GenerateOptions)
    judge: str | None = None
    embedder: str | None = None
    models: str | None = None
    use_cache: bool = True
    db: Location | None = None


class Generation:
    """Checked when made, before any model loads; `run()` writes the questions."""

    def __init__(
        self, request: GenerateRequest, on_skip: Callable[[Skipped], None] | None = None
    ) -> None:
        self.request = request
        split_size(request.options.size, request.options.mix)  # a bad mix before reading
        check_output(request.output)  # a missing folder, a folder as output: before reading
        # each skipped document is passed on as it is found, before an error for none left
        self.corpus = read_corpus(list(request.docs), request.options.chunk_tokens, on_skip)
        self.models = load_models_config(request.models)
        # an unknown name before the cache's database is made
        if request.judge is not None:
            self.models.judge(request.judge)
        if request.embedder is not None:
            self.models.embedder(request.embedder)
        #: what writing the output will do (an existing file is replaced: the CLI says so)
        self.target = check_output(request.output, self._inputs())

    def _inputs(self) -> list[tuple[Path, str]]:
        """The files the output must never be: every document named or found (a skipped one
        too), models.toml, and the run database with its journals."""
        corpus, request = self.corpus, self.request
        documents = [Path(d.path) for d in corpus.documents] + [
            Path(s.path) for s in corpus.skipped
        ]
        inputs = named(documents, "one of the documents")
        inputs.append((self.models.source, "the models file"))
        return inputs + database_files(request.db or default_db_path())

    def run(self, events: Events | None = None) -> GenerateResult:
        """Write and check the questions; UsageError when not one passed the checks."""
        request = self.request
        # the judge/embedding cache makes a re-run with the same documents free
        with generate_tools(
            self.models, request.judge, request.embedder, request.use_cache, request.db
        ) as tools:
            result = generate_testset(self.corpus, tools, request.options, events)
        if not result.questions:
            raise UsageError(
                f"no question passed the checks ({len(result.rejections)} candidates rejected: "
                + ", ".join(f"{n} {r}" for r, n in result.reasons().items())
                + f"); run with {param('verbose=True')} to see them"
            )
        return result

    def estimate(self, measure: bool = True) -> GenerateEstimate:
        """What `run()` will cost, counted without evaluating anything, as two bounds (see
        `GenerateEstimate`); a model whose speed here is not kept yet is measured when
        `measure`."""
        request = self.request
        bounds = []
        for passing in (True, False):
            with Counting(
                self.models,
                [_Writes()],
                request.judge,
                request.embedder,
                request.db,
                request.use_cache,
                kinds=("part", "part"),
            ) as counting:

                def count(part: str, work: Callable[[], object]) -> None:
                    counting.count(part, part, work)

                count_testset(self.corpus, counting.tools, request.options, passing, count)
                estimate = counting.estimate(measure)
            bounds.append(replace(estimate, n_items=len(self.corpus.chunks), item="chunk"))
        return GenerateEstimate(*bounds)

    def write(self, result: GenerateResult) -> None:
        """The test set: a file atomically (the old file or the new one, never half of one),
        a device or FIFO as a stream."""
        write_jsonl(self.target, (q.row() for q in result.questions))
