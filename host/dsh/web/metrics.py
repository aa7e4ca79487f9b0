"""`GET /metrics` and the HTTP requests it counts (DESIGN §14.3).

`/metrics` is Prometheus text: the running Host's `Metrics` (its own and
its plugins'), then this app's `dsh_http_requests_total`. It needs the
token like `/api` (a scraper sends `Authorization: Bearer <token>`): the
counts say who uses the host and when. Before the Host runs it answers
only the requests.

`RequestMetrics` is the outermost middleware, so it counts every answer,
the guard's refusals included. Its labels stay bounded: `route` is the
matched route's template (`/api/sessions/{session_id}`, never an id;
`(unmatched)` when no route matched, a refusal before routing included),
`method` one of the methods HTTP defines (else `other`), `status` the
answered code. WebSockets are not counted here.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..base.metrics import CONTENT_TYPE, Counter, Metrics
from ..base.scope import Scope as DshScope
from .state import WebState

__all__ = ["HttpMetrics", "RequestMetrics", "router"]

router = APIRouter()

_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
UNMATCHED = "(unmatched)"


class HttpMetrics:
    """The app's own metrics: `dsh_http_requests_total`, kept as long as the app."""

    def __init__(self) -> None:
        self.metrics = Metrics()
        self.requests: Counter = self.metrics.counter(
            "dsh_http_requests_total",
            "HTTP requests answered, by method, route template and status.",
            ("method", "route", "status"),
            scope=DshScope("web app metrics"),
        )


class RequestMetrics:
    """ASGI middleware counting each HTTP answer in `counted` (module docstring)."""

    def __init__(self, app: ASGIApp, counted: HttpMetrics) -> None:
        self.app = app
        self.requests = counted.requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # what the client gets if the app fails before it answers

        async def send_counted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_counted)
        finally:
            route = scope.get("route")
            method = scope["method"] if scope["method"] in _METHODS else "other"
            template = getattr(route, "path", None) or UNMATCHED
            self.requests.labels(method, template, str(status)).inc()


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    state = getattr(request.app.state, "web", None)
    body = b""
    if isinstance(state, WebState):
        body += state.host.metrics.render()
    counted = getattr(request.app.state, "http_metrics", None)
    if isinstance(counted, HttpMetrics):
        body += counted.metrics.render()
    return Response(body, media_type=CONTENT_TYPE)
