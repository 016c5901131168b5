"""The review page as a server object: `localeval.ReviewServer`, what `localeval review` serves.

    with localeval.ReviewServer("latest", reviewer="ann") as server:
        print(server.url)   # http://127.0.0.1:PORT/ : a reviewer labels the run's verdicts
    # stopped; each label was saved in the run database when it was made

The port is bound when the server is made (port 0: a free one), so `url` is known and a
port in use is a UsageError before anything is served. Nothing here prints.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Self

from localeval.api.history import DEFAULT_DB, history_location
from localeval.api.labelling import Db
from localeval.closing import Closing
from localeval.errors import UsageError, param
from localeval.labels.review_items import load_review_run, require_verdicts
from localeval.labels.store import Label, LabelStore, default_reviewer


class ReviewServer(Closing):
    """The review page of one complete run (`run`: latest, latest~N or a run id; `db`: the
    history) on 127.0.0.1:`port`, labelling as `reviewer` (default: the OS user).

    Made: the run is read and the port bound (UsageError for a run with no judge verdict,
    a results file, a port in use). `start()` serves it on a thread of this process until
    `stop()`; `serve()` serves it in the calling thread until Ctrl-C, SIGTERM or `stop()`
    from another thread. `with` starts it and stops it when the block ends."""

    def __init__(
        self,
        run: str = "latest",
        *,
        reviewer: str | None = None,
        port: int = 0,
        db: Db = DEFAULT_DB,
    ):
        from localeval.review.app import review_app
        from localeval.review.server import bind_local, review_server, url_of

        if reviewer is not None and not reviewer.strip():
            raise UsageError(f"{param('reviewer')}: give a name (default: the OS user)")
        self.reviewer = reviewer or default_reviewer()
        self._review = load_review_run(run, history_location(db))
        require_verdicts(self._review)
        self._socket = bind_local(port)
        #: the page's address, http://127.0.0.1:PORT/
        self.url = url_of(self._socket)
        self._server = review_server(review_app(self._review, self.reviewer))
        self._thread: threading.Thread | None = None
        self._failed: BaseException | None = None

    @property
    def run_id(self) -> str:
        return self._review.run.id

    @property
    def n_samples(self) -> int:
        return len(self._review.samples)

    @property
    def n_verdicts(self) -> int:
        """The judge's verdicts on the run, each a reviewer may mark right or wrong."""
        return self._review.n_verdicts

    @property
    def n_scores(self) -> int:
        """The judged scores of the run, each a reviewer may mark too high, right, too low."""
        return self._review.n_scores

    @property
    def serving(self) -> bool:
        return self._server.started and not self._server.should_exit

    def start(self) -> Self:
        """Serve the page on a thread of this process; returns once it listens."""
        if self._thread is not None:
            raise UsageError("the review server is already started")
        self._thread = threading.Thread(target=self._serve_quietly, daemon=True)
        self._thread.start()
        self._server.ready.wait()  # set once it listens, or once it ended without
        if self._failed is not None:
            raise self._failed
        return self

    def _serve_quietly(self) -> None:
        from localeval.review.server import serve

        try:
            serve(self._server, self._socket)
        except BaseException as exc:  # told to start(), which raises it in the caller
            self._failed = exc

    def serve(self, on_start: Callable[[], None] | None = None) -> None:
        """Serve the page in this thread until Ctrl-C (raised again once it stopped, as
        uvicorn does), SIGTERM, or `stop()` from another thread; `on_start` is called
        first (the port already queues connections)."""
        from localeval.review.server import serve

        if self._thread is not None:
            raise UsageError("the review server is already started")
        serve(self._server, self._socket, on_start)

    def stop(self) -> None:
        """Stop serving (the labels are saved as they are made: nothing is lost) and free
        the port."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join()
        self._socket.close()

    def close(self) -> None:
        self.stop()

    def __enter__(self) -> Self:
        return self.start()

    def labels(self) -> list[Label]:
        """Each reviewer's current label of each item of the run, in the order made."""
        with LabelStore.open(self._review.db) as store:
            return store.current(self.run_id)


__all__ = ["ReviewServer"]
