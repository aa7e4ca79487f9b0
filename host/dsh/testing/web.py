"""In-process HTTP and WebSocket clients against a test Host's web app.

`web_client(host)` is an `httpx.AsyncClient` on the app `dsh web` would
serve for `host`, through httpx's ASGI transport: no socket, no server, the
access token already in its headers. `WebSocketSession` drives the same
app's WebSocket endpoints (`/api/sessions/{id}/live`, `/api/live`) over the
ASGI protocol directly, as a server would: `send_json`, `receive_json`,
`close`.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.types import ASGIApp, Message

from ..host.host import Host
from ..web.app import create_app
from ..web.settings import WebSettings

__all__ = ["TEST_TOKEN", "WebSocketClosed", "WebSocketSession", "web_app", "web_client"]

TEST_TOKEN = "dsh-testing-token"
_HOST = "127.0.0.1"
_PORT = 8765  # never bound: the Host header names it, as a browser's would
DEADLINE = 5.0


def web_app(host: Host) -> ASGIApp:
    """The web app `dsh web` serves for running `host`, with token `TEST_TOKEN`."""
    return create_app(host, WebSettings(token=TEST_TOKEN, host=_HOST, port=_PORT))


@asynccontextmanager
async def web_client(app: ASGIApp) -> AsyncIterator[httpx.AsyncClient]:
    """An `httpx.AsyncClient` on `app` (see `web_app`), authorized with `TEST_TOKEN`."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport,
        base_url=f"http://{_HOST}:{_PORT}",
        headers={"Authorization": f"Bearer {TEST_TOKEN}"},
    ) as client:
        yield client


class WebSocketClosed(Exception):
    """The server closed the WebSocket (or refused it); `code` and `reason` say why."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"the WebSocket closed with code {code}: {reason or 'no reason'}")
        self.code = code
        self.reason = reason


class WebSocketSession:
    """One WebSocket connection to an ASGI app, driven in-process (see `connect`)."""

    def __init__(
        self,
        to_app: MemoryObjectSendStream[Message],
        from_app: MemoryObjectReceiveStream[Message],
    ) -> None:
        self._to_app = to_app
        self._from_app = from_app

    @classmethod
    @asynccontextmanager
    async def connect(
        cls, app: ASGIApp, path: str, *, token: str | None = TEST_TOKEN
    ) -> AsyncIterator[WebSocketSession]:
        """Open `path` on `app`; raises `WebSocketClosed` if the app refuses it."""
        query = urlencode({"token": token}) if token is not None else ""
        scope: dict[str, Any] = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "scheme": "ws",
            "server": (_HOST, _PORT),
            "client": (_HOST, 50000),
            "root_path": "",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "headers": [(b"host", f"{_HOST}:{_PORT}".encode())],
            "subprotocols": [],
            "state": {},
        }
        to_app, app_inbox = anyio.create_memory_object_stream[Message](math.inf)
        app_outbox, from_app = anyio.create_memory_object_stream[Message](math.inf)
        ended = anyio.Event()
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_run, app, scope, app_inbox, app_outbox, ended)
                session = cls(to_app, from_app)
                try:
                    await to_app.send({"type": "websocket.connect"})
                    await session._accepted()
                    yield session
                finally:
                    with suppress(anyio.BrokenResourceError):  # the app already ended it
                        await to_app.send({"type": "websocket.disconnect", "code": 1000})
                    with anyio.move_on_after(DEADLINE):
                        await ended.wait()
                    group.cancel_scope.cancel("the test closed its WebSocket")
                    to_app.close()
                    from_app.close()
        except BaseExceptionGroup as group:
            # The task group is this helper's business: a test sees its own
            # exception (or the refusal) as raised, not wrapped in a group.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from group
            raise

    async def _accepted(self) -> None:
        message = await self._next()
        if message["type"] != "websocket.accept":
            raise _closed(message)

    async def _next(self) -> Message:
        try:
            with anyio.fail_after(DEADLINE):
                return await self._from_app.receive()
        except anyio.EndOfStream:
            raise WebSocketClosed(1006, "the app ended the connection") from None

    async def receive_json(self) -> Any:
        """The next JSON message the server sends (`WebSocketClosed` if it closes)."""
        message = await self._next()
        if message["type"] != "websocket.send":
            raise _closed(message)
        text = message.get("text")
        return json.loads(text if text is not None else message["bytes"])

    async def send_json(self, value: Any) -> None:
        """Send `value` as one text message."""
        await self._to_app.send({"type": "websocket.receive", "text": json.dumps(value)})


async def _run(
    app: ASGIApp,
    scope: dict[str, Any],
    inbox: MemoryObjectReceiveStream[Message],
    outbox: MemoryObjectSendStream[Message],
    ended: anyio.Event,
) -> None:
    async def receive() -> Message:
        return await inbox.receive()

    async def send(message: Message) -> None:
        await outbox.send(message)

    try:
        async with inbox, outbox:
            await app(scope, receive, send)
    finally:
        ended.set()


def _closed(message: Message) -> WebSocketClosed:
    if message["type"] == "websocket.http.response.start":
        return WebSocketClosed(int(message.get("status", 403)), "refused before accepting")
    return WebSocketClosed(int(message.get("code", 1000)), str(message.get("reason", "")))
