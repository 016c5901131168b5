"""`localeval review RUN`: check the judge's verdicts on a run in a local page, and label
them."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import click

from localeval.cli.options import db_option, echo, translate_errors

if TYPE_CHECKING:
    from localeval.api import Location

reviewer_option = click.option(
    "--reviewer",
    default=None,
    metavar="NAME",
    help="Whose labels these are (default: the OS user).",
)


@click.command("review")
@click.argument("run", metavar="RUN")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port on 127.0.0.1 to serve the page on (default: a free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the web browser.")
@reviewer_option
@db_option
@translate_errors
def review(
    run: str, port: int, open_browser: bool, reviewer: str | None, db_path: Location | None
) -> None:
    """Review the judge's verdicts on RUN (`latest`, `latest~N` or a run id) in a page served
    on 127.0.0.1, and label them.

    The page shows each sample's question, answer, reference and contexts, its scores, and
    every verdict the judge gave (statement supported?, answer addresses the question?,
    chunk useful?) with its probability and the context sentence it rests on. Mark each
    verdict right or wrong, and each score too high, right or too low, by keyboard (press
    ? on the page) or mouse. Each label is saved in the run database when it is made, with
    the reviewer's name and the time. `localeval calibrate --labels RUN` measures the judge
    against them; `localeval labels export` writes them to a file. Stop with Ctrl-C.
    """
    from localeval.api import DEFAULT_DB, ReviewServer

    server = ReviewServer(run, reviewer=reviewer, port=port, db=db_path or DEFAULT_DB)
    echo(
        f"Reviewing run {server.run_id}: {server.n_samples} samples, {server.n_verdicts} "
        f"verdicts, {server.n_scores} scores, as {server.reviewer}."
    )
    echo(f"Open {server.url} (Ctrl-C stops the server)")

    def opened() -> None:
        if open_browser:
            import webbrowser

            webbrowser.open(server.url)

    # uvicorn stops on Ctrl-C (or SIGTERM), then raises it again: here, the way to stop
    with contextlib.suppress(KeyboardInterrupt):
        server.serve(opened)
    labels = server.labels()
    yours = sum(label.reviewer == server.reviewer for label in labels)
    echo(f"Stopped. Run {server.run_id} holds {len(labels)} current labels, {yours} of them yours.")


COMMAND = review
