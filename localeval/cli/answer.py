"""`localeval answer`: a test set's answers and contexts filled by the user's own pipeline."""

from __future__ import annotations

from pathlib import Path

import click

from localeval.cli.options import echo, progress_option, translate_errors, warn_if_replaced
from localeval.cli.progress import Progress


class _AnswerProgress:
    """The progress bar of `answer`, counting questions answered before as done."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Progress | None = None

    def start(self, total: int, done_before: int) -> None:
        self.bar = Progress(total, "Answering", enabled=self.enabled, resumed=done_before)

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@click.command()
@click.argument("testset", type=click.Path(path_type=Path))
@click.option(
    "--app", "app_spec", required=True, metavar="MODULE:FUNCTION",
    help="Your pipeline: a function question -> {'answer': str, 'contexts': [str, ...]} (or a "
    "tuple), as package.module:function or path/to/file.py:function.",
)  # fmt: skip
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), required=True,
    help="The filled test set to write (JSONL), for `localeval evaluate`.",
)  # fmt: skip
@click.option(
    "--resume/--no-resume", default=True, show_default=True,
    help="Continue from OUTPUT.partial, the answers an interrupted run kept.",
)  # fmt: skip
@progress_option
@translate_errors
def answer(testset: Path, app_spec: str, output: Path, resume: bool, progress: bool) -> None:
    """Fill the answer and contexts of each question in TESTSET by calling your own RAG
    pipeline, and write the result to OUTPUT for `localeval evaluate`.

    Each answer is kept in OUTPUT.partial as it is made: after a crash, Ctrl-C or a failing
    question, the same command continues where it stopped.

    Exit status: 0 written, 2 bad usage or input or the app failed, 3 internal error.
    """
    from localeval.api import TestsetAnswering

    answering = TestsetAnswering(testset, app_spec, output, resume=resume)
    warn_if_replaced(answering.target)
    counter = _AnswerProgress(progress)
    try:
        result = answering.run(counter)
    finally:
        counter.close()
    before = f" ({result.resumed} answered by an earlier run)" if result.resumed else ""
    echo(
        f"Answered {result.answered + result.resumed} questions with {app_spec}{before}; "
        f"{result.seconds:.1f} s in the app. Written to {output}"
    )


COMMAND = answer
