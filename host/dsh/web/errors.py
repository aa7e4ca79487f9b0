"""The one error shape of the web API, and every path that produces it.

Every failure answers `{"error": {"code", "message"}}` with a fitting status
(DESIGN §9): `ApiError` for failures the routes decide; handlers that map
FastAPI's validation errors (422 `invalid_body` / `invalid_query`), Starlette's
routing errors (404 `not_found`, 405 `method_not_allowed`) and every error of
the host's own: a `CodedError` answers with itself, a `DshError` with the code
and status its class declares (`dsh.base.errors.refusal_of`), an `OSError` as
storage failing; and `CatchAll`, an ASGI middleware that turns any other
exception into a logged 500 `internal_error` instead of a bare text page.
`deny_websocket` refuses a WebSocket handshake with the same shape.

The web layer's own errors:

    CodedError (dsh.base.errors)
    └── ApiError                 a failure a route decides, with its status (and headers)
    TokenError                   the access token cannot be used (too short, whitespace, …)
    └── TokenFileError           the token file cannot be used
    LaunchError                  `dsh web` cannot start; what to do
    WebStartupError(RuntimeError)  the app's lifespan could not enter the Host
    └── ListenError              the server cannot listen where it was asked to
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from pydantic import JsonValue
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..base.errors import CodedError, DshError, refusal_of
from ..base.validation import problems

__all__ = [
    "ApiError",
    "CatchAll",
    "deny_websocket",
    "error_body",
    "error_response",
    "install_error_handlers",
]

log = logging.getLogger(__name__)

POLICY_VIOLATION = 1008


class ApiError(CodedError):
    """A failure with its HTTP status, machine-readable code and human message."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(code, message, status=status)
        self.headers = headers


class TokenError(Exception):
    """The access token cannot be used; the message names where it came from and the rule."""


class TokenFileError(TokenError):
    """The token file cannot be used; the message names it and says what to do."""


class LaunchError(Exception):
    """The web host cannot start; the message says why and what to do.

    `problems` lists separate problems when there are several (each one line).
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


class WebStartupError(RuntimeError):
    """The app's lifespan failed to start (the Host could not be entered)."""


class ListenError(WebStartupError):
    """The server cannot listen where it was asked to; the message says why and what to pass."""


def error_body(code: str, message: str) -> dict[str, JsonValue]:
    """`{"error": {"code", "message"}}`."""
    return {"error": {"code": code, "message": message}}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)


def api_error_for(error: Exception) -> ApiError | None:
    """The API error a known failure stands for (`refusal_of`), or None for an unexpected one."""
    if isinstance(error, ApiError):
        return error
    refusal = refusal_of(error)
    if refusal is None:
        return None
    return ApiError(refusal.status, refusal.code, refusal.message)


async def _known_error(request: Request, error: Exception) -> Response:
    api_error = api_error_for(error)
    if api_error is None:  # one of ours that means nothing to a client: a bug
        log.error("unhandled error in %s %s", request.method, request.url.path, exc_info=error)
        return _unexpected()
    if api_error.status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, error)
    return error_response(api_error.status, api_error.code, api_error.message, api_error.headers)


def _unexpected() -> JSONResponse:
    return error_response(500, "internal_error", "an unexpected error occurred; see the server log")


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    if error.status_code == 400 and isinstance(error.__cause__, ValueError):
        # FastAPI's own answer to a body it cannot decode (not UTF-8: a
        # UnicodeDecodeError); a bad body like any other, so the same 422 as bad JSON.
        return error_response(422, "invalid_body", "the body is not valid UTF-8 JSON")
    codes = {404: "not_found", 405: "method_not_allowed"}
    code = codes.get(error.status_code, "http_error")
    message = error.detail
    if error.status_code == 404:
        message = f"no route {request.url.path}"
    elif error.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    return error_response(error.status_code, code, message, dict(error.headers or {}))


async def _validation_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    return describe_validation(error.errors())


def describe_validation(errors: Sequence[Mapping[str, Any]]) -> JSONResponse:
    """422 naming each offending field: `invalid_body` when the body is at fault."""
    parts: list[str] = []
    in_body = False
    for detail, problem in zip(errors, problems(errors, location=_subject), strict=True):
        in_body = in_body or problem.loc[:1] == ("body",)
        if problem.type == "json_invalid":
            reason = (detail.get("ctx") or {}).get("error", "")
            parts.append(f"the body is not valid JSON: {reason}".rstrip(": "))
        elif problem.loc == ("body",) and problem.type == "missing":
            parts.append("a JSON body is required")
        else:
            parts.append(f"{problem.where}: {problem.message}")
    code = "invalid_body" if in_body else "invalid_query"
    return error_response(422, code, "; ".join(parts) or "the request is invalid")


def _subject(loc: tuple[int | str, ...]) -> str:
    """`field 'text'`, `path parameter 'session_id'`, `the query`: what a problem is about."""
    where = str(loc[0]) if loc else "request"
    field = ".".join(str(part) for part in loc[1:])
    if not field:
        return f"the {where}"
    if where == "body":
        return f"field {field!r}"
    return f"{where} parameter {field!r}"


def install_error_handlers(app: FastAPI) -> None:
    """Answer every handled failure of `app` in the one error shape."""
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    for known in (CodedError, DshError, OSError):
        app.add_exception_handler(known, _known_error)


class CatchAll:
    """Turn an unexpected exception in an HTTP request into a logged JSON 500.

    If the response had already started there is nothing left to answer, so
    the exception is re-raised for the server to close the connection.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            log.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            await _unexpected()(scope, receive, send)


async def deny_websocket(
    send: Send,
    scope: Scope,
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
) -> None:
    """Refuse a WebSocket handshake before accepting it.

    With the ASGI `websocket.http.response` extension the client gets an HTTP
    `status` with the error shape (and `headers`); without it, a close with
    1008 (policy violation), which servers turn into a 403 handshake response.
    """
    if "websocket.http.response" in scope.get("extensions", {}):
        response = error_response(status, code, message, headers)
        await send(
            {
                "type": "websocket.http.response.start",
                "status": status,
                "headers": response.raw_headers,
            }
        )
        await send({"type": "websocket.http.response.body", "body": response.body})
        return
    await send({"type": "websocket.close", "code": POLICY_VIOLATION, "reason": message[:120]})
