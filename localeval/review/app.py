"""The review page as a Starlette app: the page itself (plain HTML, CSS and JavaScript
served from this package: nothing from outside the machine), the run as JSON, and one
request per label, stored in the run database before the answer is sent.

Routes: GET / (the page), /review.js, /saving.js, /review.css; GET /api/run (the run, its
verdicts and every reviewer's current labels); POST /api/labels {sample_id, metric, verdict
(an index, or null for the score), mark}, answered with the label saved; POST /api/undo
(deletes this reviewer's latest label), answered with it and their label of its item now;
GET /api/corrected (the corrected means' lines as the labels now make them: the page asks
again once its labels are saved, so the formula lives only in localeval.prediction_powered).
A reply holds only what the request changed, whatever the number of labels the run holds.
A POST must be JSON (a page on another site cannot send one without the browser asking
first, which this app never allows), and a request must name 127.0.0.1 or localhost as
its host.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from localeval.errors import UsageError
from localeval.labels.review_items import ReviewRun
from localeval.labels.store import LabelStore
from localeval.reports.templating import escaping_environment

#: everything the page may load comes from the app itself
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
ASSETS = {
    "/review.js": ("review.js", "text/javascript; charset=utf-8"),
    "/saving.js": ("saving.js", "text/javascript; charset=utf-8"),
    "/estimate.js": ("estimate.js", "text/javascript; charset=utf-8"),
    "/review.css": ("review.css", "text/css; charset=utf-8"),
}
HOSTS = ["127.0.0.1", "localhost"]
#: the page's template: whatever value it is given is escaped, as in the HTML report (the run
#: itself reaches the page as JSON, which review.js sets only as text)
PAGES = escaping_environment("localeval.review", ".", ".html", layout=False)


def asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def page() -> str:
    """The review page as served."""
    return PAGES.get_template("page.html").render()


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class ReviewApi:
    """The app's handlers over one run, for one reviewer; the database is opened for each
    request (a label is committed before the reply, and nothing is held between them)."""

    def __init__(self, review: ReviewRun, reviewer: str):
        self.review = review
        self.reviewer = reviewer
        self.page = review.page()

    def _with_store(self, work: Callable[[LabelStore], dict[str, Any]]) -> Response:
        try:
            with LabelStore.open(self.review.db) as store:
                return JSONResponse(work(store))
        except UsageError as exc:
            return _error(str(exc), 503)

    async def run(self, request: Request) -> Response:
        return self._with_store(
            lambda store: {
                **self.page,
                "reviewer": self.reviewer,
                "labels": [label.as_dict() for label in store.current(self.review.run.id)],
                "corrected": self.review.corrected_page(),
            }
        )

    async def corrected(self, request: Request) -> Response:
        try:
            return JSONResponse(self.review.corrected_page())
        except UsageError as exc:
            return _error(str(exc), 503)

    async def add(self, request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        verdict = body.get("verdict")
        fields = (body.get("sample_id"), body.get("metric"), body.get("mark"))
        if not all(isinstance(f, str) for f in fields) or not (
            verdict is None or (isinstance(verdict, int) and not isinstance(verdict, bool))
        ):
            return _error("a label names sample_id, metric, mark, verdict (an index or null)", 400)
        sample_id, metric, mark = fields
        try:
            label = self.review.label_for(sample_id, metric, verdict, mark, self.reviewer)
        except UsageError as exc:
            return _error(str(exc), 400)

        def save(store: LabelStore) -> dict[str, Any]:
            (saved,) = store.add(self.review.run.id, [label])
            return {"saved": saved.as_dict()}

        return self._with_store(save)

    async def undo(self, request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body

        def undo(store: LabelStore) -> dict[str, Any]:
            run_id = self.review.run.id
            undone = store.undo(run_id, self.reviewer)
            if undone is None:
                return {"undone": None, "current": None}
            # the reviewer's label before it, if any, is theirs again
            now = store.current(run_id, reviewer=self.reviewer, item=undone.item)
            return {"undone": undone.as_dict(), "current": now[0].as_dict() if now else None}

        return self._with_store(undo)


async def _json_body(request: Request) -> dict[str, Any] | Response:
    """The request's JSON object, or the error response to send."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error("send JSON (Content-Type: application/json)", 415)
    try:
        body = await request.json()
    except ValueError:
        return _error("the request body is not JSON", 400)
    if not isinstance(body, dict):
        return _error("the request body is a JSON object", 400)
    return body


def _static(text: str, media_type: str) -> Callable[[Request], Awaitable[Response]]:

    async def serve(request: Request) -> Response:
        return Response(
            text,
            media_type=media_type,
            headers={"Content-Security-Policy": POLICY, "Cache-Control": "no-store"},
        )

    return serve


async def _no_icon(request: Request) -> Response:
    return Response(status_code=204)


def review_app(review: ReviewRun, reviewer: str) -> Starlette:
    """The app for one run and one reviewer."""
    api = ReviewApi(review, reviewer)
    routes = [Route("/", _static(page(), "text/html; charset=utf-8"))]
    routes += [Route(path, _static(asset(name), kind)) for path, (name, kind) in ASSETS.items()]
    routes += [
        Route("/api/run", api.run),
        Route("/api/corrected", api.corrected),
        Route("/api/labels", api.add, methods=["POST"]),
        Route("/api/undo", api.undo, methods=["POST"]),
        # the browser asks for it unbidden: an answer without content keeps its console quiet
        Route("/favicon.ico", _no_icon),
    ]
    return Starlette(
        routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=HOSTS)]
    )
