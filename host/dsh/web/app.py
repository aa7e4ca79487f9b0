"""The web app factory: routes, middleware and error handlers around one Host.

- `create_app(host, settings)` serves a Host that is already running (its
  caller entered it and will close it). The live-stream hub starts observing
  at once and stops when the app shuts down or the Host closes, whichever is
  first.
- `build_web_app(make_host, settings)` is for `dsh web`: the app's lifespan
  enters `make_host()` and closes it on shutdown, in the lifespan task,
  because a Host owns an anyio task group that must be exited by the task
  that entered it. Closing the Host closes every agent and flushes every
  live Session. If entering fails, the exception is kept as
  `app.state.startup_error` (the server itself only says "startup failed");
  once it started, one INFO line says which model it runs (`model: demo
  (offline)`, `model: openai NAME at URL`: never a key).

Middleware, outermost first: `RequestMetrics` (counts every answer for
`GET /metrics`), `AccessGuard` (Host allowlist, token, Origin, security
headers), `BodyLimit` (413), `CatchAll` (JSON 500). FastAPI's own
documentation pages are off; the OpenAPI document is served, token-protected,
at `/api/openapi.json`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager

from fastapi import FastAPI

from ..base.version import VERSION as __version__
from ..host.host import Host
from ..models.base import describe_model
from . import api, everywhere, metrics, static, stream
from .errors import CatchAll, install_error_handlers
from .guards import AccessGuard, AccessPolicy
from .limits import BodyLimit
from .metrics import HttpMetrics, RequestMetrics
from .plugin_routes import PluginRoutes
from .settings import WebSettings
from .state import WebState
from .throttle import AuthThrottle

log = logging.getLogger(__name__)

__all__ = ["build_web_app", "create_app"]


def _new_app(
    settings: WebSettings,
    lifespan: Callable[[FastAPI], AsyncIterator[None]] | None,
) -> FastAPI:
    app = FastAPI(
        title="dsh",
        version=__version__,
        summary="The dsh web host API (token-protected; see the README)",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=None if lifespan is None else asynccontextmanager(lifespan),
    )
    app.include_router(api.router)
    app.include_router(stream.router)
    app.include_router(everywhere.router)
    app.include_router(static.router)
    app.include_router(metrics.router)
    app.router.routes.append(PluginRoutes())  # last: the host's own routes win
    install_error_handlers(app)
    # add_middleware wraps: the last one added is the outermost.
    app.add_middleware(CatchAll)
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_body_bytes,
        message_bytes=settings.max_message_body_bytes,
    )
    throttle = AuthThrottle(limit=settings.auth_failures, window=settings.auth_window)
    app.state.auth_throttle = throttle  # its last summary line is written at shutdown
    app.add_middleware(AccessGuard, policy=AccessPolicy(settings), throttle=throttle)
    app.state.http_metrics = counted = HttpMetrics()
    app.add_middleware(RequestMetrics, counted=counted)
    return app


def _close_throttle(app: FastAPI) -> None:
    throttle: AuthThrottle = app.state.auth_throttle
    throttle.close()


def _attach(app: FastAPI, host: Host, settings: WebSettings) -> WebState:
    state = WebState.start(host, settings)
    app.state.web = state
    return state


def create_app(host: Host, settings: WebSettings) -> FastAPI:
    """A web app serving `host`, which must already be running."""

    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            state.close()
            _close_throttle(app)

    app = _new_app(settings, lifespan)
    state = _attach(app, host, settings)
    # If the Host closes first, stop observing its live Sessions with it.
    host.scope.add(state.close)
    return app


def build_web_app(make_host: Callable[[], Host], settings: WebSettings) -> FastAPI:
    """A web app whose lifespan runs the Host `make_host()` builds (for `dsh web`)."""

    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            try:
                host = await stack.enter_async_context(make_host())
            except Exception as error:
                # The server only reports "startup failed"; keep the reason for `serve`.
                app.state.startup_error = error
                raise
            # Known only now: a plugin's model is resolved when the Host starts.
            log.info("model: %s", describe_model(host.model))
            state = _attach(app, host, settings)
            try:
                yield
            finally:
                state.close()
                _close_throttle(app)
                del app.state.web

    return _new_app(settings, lifespan)
