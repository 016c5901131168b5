"""`localeval review RUN`: check the judge's verdicts on a run in a local page, and label
them."""

from __future__ import annotations

import contextlib
import getpass
from typing import TYPE_CHECKING

import click

from localeval.cli.options import db_option, echo, translate_errors
from localeval.errors import UsageError

if TYPE_CHECKING:
    from localeval.database import Location


def default_reviewer() -> str:
    """The OS user's name (what labels are kept under unless --reviewer says otherwise)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name (a container without a passwd entry)
        return "reviewer"


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
    from localeval.labels.review_items import load_review_run, require_verdicts
    from localeval.labels.store import LabelStore
    from localeval.review.app import review_app
    from localeval.review.server import bind_local, review_server, serve, url_of

    if reviewer is not None and not reviewer.strip():
        raise UsageError("--reviewer: give a name (default: the OS user)")
    name = reviewer or default_reviewer()
    loaded = load_review_run(run, db_path)
    require_verdicts(loaded)
    sock = bind_local(port)
    url = url_of(sock)
    echo(
        f"Reviewing run {loaded.run.id}: {len(loaded.samples)} samples, {loaded.n_verdicts} "
        f"verdicts, {loaded.n_scores} scores, as {name}."
    )
    echo(f"Open {url} (Ctrl-C stops the server)")

    def opened() -> None:
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    # uvicorn stops on Ctrl-C (or SIGTERM), then raises it again: here, the way to stop
    with contextlib.suppress(KeyboardInterrupt):
        serve(review_server(review_app(loaded, name)), sock, opened)
    with LabelStore.open(loaded.db) as store:
        labels = store.current(loaded.run.id)
    yours = sum(label.reviewer == name for label in labels)
    echo(f"Stopped. Run {loaded.run.id} holds {len(labels)} current labels, {yours} of them yours.")


COMMAND = review
