"""Test sets: `localeval generate` and `localeval answer` as calls.

    import localeval

    made = localeval.generate_testset("docs/", "testset.jsonl", size=20)
    filled = localeval.answer_testset("testset.jsonl", my_pipeline, "filled.jsonl")
    run = localeval.evaluate("filled.jsonl")

`TestsetGeneration` and `TestsetAnswering` are the same work in two steps: made, they
check everything that can be checked before a model loads or the pipeline is called (and
say whether the output file will be replaced); `.run()` then does the work. Nothing here
prints: a skipped document or a note on the set is a LocalevalWarning.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.api.events import warn
from localeval.api.history import DEFAULT_DB, history_location
from localeval.api.models import Db, ModelsFile
from localeval.errors import UsageError
from localeval.judge import Usage
from localeval.results.output_files import OutputTarget
from localeval.testset.answer import AnswerResult, Counter, check_answer_output
from localeval.testset.answer import answer_testset as _fill
from localeval.testset.candidates import Events, GeneratedQuestion, GenerateResult, Rejection
from localeval.testset.chunking import DEFAULT_CHUNK_TOKENS, MIN_CHUNK_TOKENS
from localeval.testset.documents import Skipped
from localeval.testset.filters import DEFAULT_MAX_OVERLAP, DEFAULT_MAX_SIMILARITY
from localeval.testset.generation import (
    DEFAULT_MIX_TEXT,
    GenerateEstimate,
    GenerateRequest,
    Generation,
    parse_mix,
)
from localeval.testset.kinds import KINDS
from localeval.testset.questions import DEFAULT_MIX, Corpus, GenerateOptions

#: a path given in code
PathLike = str | os.PathLike[str]


class TestsetGeneration:
    """A test set to write from documents, checked when made, before any model loads
    (the question mix, the output, the documents, models.toml); `run()` writes it.

    docs: files or folders (read recursively: .txt, .md, .html, .pdf). output: the JSONL
    file to write (never one of the inputs). size: questions to write; mix: the share of
    each kind ({"single_fact": 0.6, ...} or "single_fact=0.6,..."); chunk_tokens: the
    largest chunk; min_support, max_overlap, max_similarity: the checks' bounds (as the
    command's options of those names). judge, embedder, models: models.toml's entries
    (default: its defaults). use_cache=False asks the models afresh; db: the database whose
    cache answers them. on_skip: told of each document skipped (default: a warning).
    """

    __test__ = False  # not a pytest test class, for all its name

    def __init__(
        self,
        docs: PathLike | Sequence[PathLike],
        output: PathLike,
        *,
        size: int = 20,
        mix: Mapping[str, float] | str | None = None,
        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
        min_support: float | None = None,
        max_overlap: float = DEFAULT_MAX_OVERLAP,
        max_similarity: float = DEFAULT_MAX_SIMILARITY,
        judge: str | None = None,
        embedder: str | None = None,
        models: ModelsFile = None,
        use_cache: bool = True,
        db: Db = DEFAULT_DB,
        on_skip: Callable[[Skipped], None] | None = None,
    ) -> None:
        _check_bounds(size, chunk_tokens, min_support, max_overlap, max_similarity)
        given = [docs] if isinstance(docs, str | os.PathLike) else list(docs)
        kinds = parse_mix(mix) if isinstance(mix, str) else dict(mix or DEFAULT_MIX)
        options = GenerateOptions(
            size=size, mix=kinds, chunk_tokens=chunk_tokens, min_support=min_support,
            max_overlap=max_overlap, max_similarity=max_similarity,
        )  # fmt: skip
        request = GenerateRequest(
            [Path(d) for d in given],
            Path(output),
            options,
            judge,
            embedder,
            None if models is None else os.fspath(models),
            use_cache,
            None if db is None else history_location(db),
        )
        self._generation = Generation(request, on_skip or (lambda skipped: warn(str(skipped))))

    @property
    def options(self) -> GenerateOptions:
        return self._generation.request.options

    @property
    def corpus(self) -> Corpus:
        """The documents read (`.documents`), those skipped (`.skipped`) and the chunks."""
        return self._generation.corpus

    @property
    def target(self) -> OutputTarget:
        """What writing the output will do (`.replaces`: an existing file is replaced)."""
        return self._generation.target

    def estimate(self, measure: bool = True) -> GenerateEstimate:
        """What `run()` will ask of the judge and embedder and how long it will take here,
        counted without evaluating anything: `.fewest` (every candidate passes the checks)
        and `.most` (every one fails), each an Estimate. A model whose speed here is not
        kept yet is measured when `measure`."""
        return self._generation.estimate(measure)

    def run(self, events: Events | None = None) -> GenerateResult:
        """Write and check the questions, and write the test set (atomically): the result
        holds `.questions`, `.rejections`, `.wanted` (per kind), `.usage`, `.seconds` and
        `.notes`. `events` is told of each phase, step and rejection (a progress bar).
        UsageError when not one question passed the checks."""
        result = self._generation.run(events)
        self._generation.write(result)
        return result


def _check_bounds(
    size: int,
    chunk_tokens: int,
    min_support: float | None,
    max_overlap: float,
    max_similarity: float,
) -> None:
    """The bounds the command line's option types hold, for values given in code."""
    if size < 1:
        raise UsageError(f"size {size}: must be 1 or more")
    if chunk_tokens < MIN_CHUNK_TOKENS:
        raise UsageError(f"chunk_tokens {chunk_tokens}: must be {MIN_CHUNK_TOKENS} or more")
    shares = {"min_support": min_support, "max_overlap": max_overlap}
    for name, value in {**shares, "max_similarity": max_similarity}.items():
        if value is not None and not 0 <= value <= 1:  # NaN too: no comparison with it holds
            raise UsageError(f"{name} {value}: must be a number from 0 to 1")


class _Bars:
    """A tqdm bar per phase of writing a test set (a widget in a notebook)."""

    def __init__(self) -> None:
        self.bar: Any = None

    def phase(self, label: str, total: int) -> None:
        from tqdm.auto import tqdm

        self.close()
        self.bar = tqdm(total=total, desc=label)

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def rejected(self, rejection: Rejection) -> None:
        pass  # counted in the result's `.rejections`

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def generate_testset(
    docs: PathLike | Sequence[PathLike], output: PathLike, *, progress: bool = True, **options: Any
) -> GenerateResult:
    """Write a test set of questions from `docs` to `output`, as `localeval generate`
    does, and return what was written (`.questions`, `.rejections`, `.usage`, ...).
    `options`: TestsetGeneration's keywords (size, mix, judge, ...). A note on how far to
    trust the set is a LocalevalWarning; progress: tqdm bars per phase."""
    generation = TestsetGeneration(docs, output, **options)
    bars = _Bars() if progress else None
    try:
        result = generation.run(bars)
    finally:
        if bars is not None:
            bars.close()
    for note in result.notes:
        warn(note)
    return result


#: the user's pipeline: question -> {"answer": str, "contexts": [str, ...]} or a tuple
App = Callable[[str], Any]


def _spec_of(app: App | str) -> str:
    """How the pipeline is named (kept with its partial answers, to continue them):
    `module:function` as given, or the function's own module and name."""
    if isinstance(app, str):
        return app
    module = getattr(app, "__module__", None) or "app"
    return f"{module}:{getattr(app, '__qualname__', type(app).__name__)}"


class TestsetAnswering:
    """A test set's answers and contexts to fill by the user's pipeline, checked when made
    (the output is never the test set, the app's file or the partial answers); `run()`
    calls the pipeline for each question not answered yet and writes `output`.

    app: a function question -> {"answer": str, "contexts": [str, ...]} (or a tuple), or
    its name as `package.module:function` or `path/to/file.py:function`. Each answer is
    kept in OUTPUT.partial as it is made: after a crash or an error in the app, the same
    call continues where it stopped (resume=False starts again).
    """

    __test__ = False  # not a pytest test class, for all its name

    def __init__(
        self, testset: PathLike, app: App | str, output: PathLike, *, resume: bool = True
    ) -> None:
        self.testset, self.output = Path(testset), Path(output)
        self.app_spec = _spec_of(app)
        self._app = None if isinstance(app, str) else app
        self.resume = resume
        #: what writing the output will do (`.replaces`: an existing file is replaced)
        self.target = check_answer_output(self.testset, self.output, self.app_spec)

    def run(self, counter: Counter | None = None) -> AnswerResult:
        """Answer every question and write the filled set: `.answered` (by this run),
        `.resumed` (by an earlier one), `.seconds` (in the app). `counter` is told the
        number of questions and of each one answered. AppError (a UsageError) when the
        app cannot be loaded, raises or returns something unusable."""
        return _fill(
            self.testset,
            self.app_spec,
            self.output,
            resume=self.resume,
            counter=counter,
            app=self._app,
            target=self.target,
        )


class _AnswerBar:
    """A tqdm bar counting the questions answered, those of an earlier run as done."""

    def __init__(self) -> None:
        self.bar: Any = None

    def start(self, total: int, done_before: int) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, initial=done_before, desc="Answering")

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def answer_testset(
    testset: PathLike,
    app: App | str,
    output: PathLike,
    *,
    resume: bool = True,
    progress: bool = True,
) -> AnswerResult:
    """Fill each question's answer and contexts in `testset` by calling `app`, and write
    the filled set to `output` for evaluate(), as `localeval answer` does (see
    TestsetAnswering). Returns `.answered`, `.resumed` and `.seconds`."""
    answering = TestsetAnswering(testset, app, output, resume=resume)
    bar = _AnswerBar() if progress else None
    try:
        return answering.run(bar)
    finally:
        if bar is not None:
            bar.close()


__all__ = [
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_MAX_OVERLAP",
    "DEFAULT_MAX_SIMILARITY",
    "DEFAULT_MIX_TEXT",
    "KINDS",
    "AnswerResult",
    "GenerateEstimate",
    "GenerateResult",
    "GeneratedQuestion",
    "Rejection",
    "TestsetAnswering",
    "TestsetGeneration",
    "Usage",
    "answer_testset",
    "generate_testset",
]
