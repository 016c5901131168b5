"""`localeval generate`: a test set written from the user's own documents."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from localeval.api.defaults import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_MAX_OVERLAP,
    DEFAULT_MAX_SIMILARITY,
    DEFAULT_MIX_TEXT,
    KINDS,
    MIN_CHUNK_TOKENS,
)
from localeval.cli.options import (
    Share,
    cache_option,
    db_option,
    echo,
    embedder_option,
    judge_option,
    models_option,
    progress_option,
    translate_errors,
    warn_if_replaced,
)
from localeval.cli.progress import Progress

if TYPE_CHECKING:
    from localeval.api import GenerateEstimate, GenerateResult, Location, Rejection, Usage


class _ProgressEvents:
    """Progress bars per phase on stderr; rejections listed as they happen with --verbose."""

    def __init__(self, enabled: bool, verbose: bool) -> None:
        self.enabled = enabled
        self.verbose = verbose
        self.bar: Progress | None = None

    def phase(self, label: str, total: int) -> None:
        self.close()
        self.bar = Progress(total, label, enabled=self.enabled)

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance()

    def rejected(self, rejection: Rejection) -> None:
        if self.verbose:
            echo(rejection_line(rejection), err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def rejection_line(rejection: Rejection) -> str:
    asked = f" {rejection.question!r}" if rejection.question else ""
    where = f"{rejection.kind} ({rejection.reason}) from {rejection.where()}"
    return f"  rejected {where}:{asked} - {rejection.detail}"


def usage_line(usage: Usage, seconds: float) -> str:
    return (
        f"judge: {usage.judge_calls} calls ({usage.cached_calls} from cache), "
        f"{usage.prompt_tokens} prompt tokens evaluated, {usage.generated_tokens} generated; "
        f"{seconds:.1f} s"
    )


def summary_lines(result: GenerateResult, output: Path, verbose: bool) -> list[str]:
    counts = ", ".join(f"{result.count(k)} {k}" for k, wanted in result.wanted.items() if wanted)
    lines = [f"Wrote {len(result.questions)} questions to {output}: {counts}"]
    for kind in result.wanted:  # in the order of the kinds
        if result.count(kind) < result.wanted[kind]:
            lines.append(
                f"Warning: only {result.count(kind)} of {result.wanted[kind]} {kind} questions "
                "passed the checks (more or longer documents give more candidates)"
            )
    reasons = ", ".join(f"{n} {reason}" for reason, n in result.reasons().items())
    if result.rejections:
        hint = "" if verbose else " (--verbose lists them)"
        lines.append(f"Rejected {len(result.rejections)} candidates: {reasons}{hint}")
    else:
        lines.append("Rejected 0 candidates")
    lines.append(usage_line(result.usage, result.seconds))
    return lines


#: what `generate --estimate` says of its figures beside the estimate's own notes
ESTIMATE_NOTES = (
    "embedding the chunks is counted exactly; the judge's calls and prompt tokens are "
    "counted with its own code for the chunks a word-hashed stand-in of the embedder picks "
    "(the real one may pick others of other lengths), so they are estimates",
)


def estimate_lines(bounds: GenerateEstimate, size: int, attempts_per_question: int) -> str:
    """--estimate's output: the work if every candidate passes, and if every one fails."""
    from localeval.reports.estimate_text import bounds_text

    headings = (
        f"If every candidate passes the judge's checks ({size} candidates, the fewest):",
        f"If every candidate fails them (up to {attempts_per_question} per question, the most):",
    )
    notes = [f"Note: {note}" for note in ESTIMATE_NOTES]
    return bounds_text(bounds.fewest, bounds.most, headings) + "\n" + "\n".join(notes)


@click.command()
@click.argument("docs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), required=True,
    help="The test set to write (JSONL), e.g. testset.jsonl.",
)  # fmt: skip
@click.option(
    "-n", "--size", type=click.IntRange(min=1), default=20, show_default=True,
    help="Questions to write.",
)  # fmt: skip
@click.option(
    "--mix", default=DEFAULT_MIX_TEXT, show_default=True, metavar="KIND=WEIGHT,...",
    help=f"Share of each question kind ({', '.join(KINDS)}); weights are normalised.",
)  # fmt: skip
@click.option(
    "--chunk-tokens", type=click.IntRange(min=MIN_CHUNK_TOKENS), default=DEFAULT_CHUNK_TOKENS,
    show_default=True, help="Largest chunk, in estimated tokens (a word or CJK character each).",
)  # fmt: skip
@click.option(
    "--min-support", type=Share(), default=None,
    help="Verdict every sentence of a reference answer needs from its chunks; the chunks "
    "nearest an unanswerable question must answer it with P(Yes) below 1 minus this. "
    "Default: 0.5 on the calibrated scale for a judge calibrated for 'supported', else the "
    "judge's faithfulness threshold in models.toml, else 0.5.",
)  # fmt: skip
@click.option(
    "--max-overlap", type=Share(), default=DEFAULT_MAX_OVERLAP, show_default=True,
    help="Most of a question that may be copied word for word from its chunk.",
)  # fmt: skip
@click.option(
    "--max-similarity", type=Share(), default=DEFAULT_MAX_SIMILARITY,
    show_default=True, help="Embedding similarity at which a question duplicates another.",
)  # fmt: skip
@click.option("-v", "--verbose", is_flag=True, help="List every rejected candidate and why.")
@click.option(
    "--estimate", "estimate_only", is_flag=True,
    help="Write nothing: print what writing the test set will ask of the judge and embedder "
    "and how long it will take on this machine, counted without evaluating anything.",
)  # fmt: skip
@judge_option
@embedder_option
@models_option
@progress_option
@cache_option(
    "Answer judge calls and embeddings made before from the local cache: a re-run with the "
    "same documents and options is free and writes the same file."
)
@db_option
@translate_errors
def generate(
    docs: tuple[Path, ...], output: Path, size: int, mix: str, chunk_tokens: int,
    min_support: float | None, max_overlap: float, max_similarity: float, verbose: bool,
    estimate_only: bool, judge_name: str | None, embedder_name: str | None, models_path: str | None,
    progress: bool, use_cache: bool, db_path: Location | None,
) -> None:  # fmt: skip
    """Write a test set of questions from the documents DOCS (files or folders, read
    recursively: .txt, .md, .html, .pdf), with reference answers written and checked by the
    judge: single_fact questions answered by one chunk, two_chunk questions that need two
    related chunks, and unanswerable ones the documents do not answer.

    With --estimate, nothing is written: what the run will ask of the models and how long
    it will take here is printed, as a range (every candidate passing, every one failing).

    Exit status: 0 written (or estimated), 2 bad usage or input, 3 internal error.
    """
    from localeval.api import TestsetGeneration

    generation = TestsetGeneration(
        docs, output, size=size, mix=mix, chunk_tokens=chunk_tokens, min_support=min_support,
        max_overlap=max_overlap, max_similarity=max_similarity, judge=judge_name,
        embedder=embedder_name, models=models_path, use_cache=use_cache, db=db_path,
        on_skip=lambda note: echo(f"Warning: {note}", err=True),
    )  # fmt: skip
    if not estimate_only:
        warn_if_replaced(generation.target)
    corpus = generation.corpus
    echo(
        f"Read {len(corpus.documents)} documents ({len(corpus.skipped)} skipped): "
        f"{len(corpus.chunks)} chunks",
        err=True,
    )
    if estimate_only:
        options = generation.options
        echo(estimate_lines(generation.estimate(), options.size, options.attempts_per_question))
        return
    events = _ProgressEvents(progress, verbose)
    try:
        result = generation.run(events)
    finally:
        events.close()
    for note in result.notes:
        echo(f"Warning: {note}", err=True)
    for line in summary_lines(result, output, verbose):
        echo(line)


COMMAND = generate
