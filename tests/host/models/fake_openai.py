"""A scriptable OpenAI-compatible chat-completions server on loopback, for adapter tests.

It is a real HTTP/1.1 server (anyio TCP listener + h11): each test queues the
replies the next requests get, in order, and reads back what the server
received. Replies are small async scripts over an `Exchange`, so a test can
send JSON, an SSE stream split into arbitrary byte pieces, an error status
with headers, or stall until the client goes away.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import anyio
import h11
from anyio.abc import SocketAttribute, SocketStream

from tests.support.deadlines import WAIT

__all__ = [
    "Exchange",
    "FakeOpenAIServer",
    "Received",
    "chunk",
    "closed_port",
    "completion",
    "drop",
    "error_reply",
    "json_reply",
    "raw_reply",
    "running_server",
    "sse_reply",
    "stall",
]

Reply = Callable[["Exchange"], Awaitable[None]]
_GONE = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError)


@dataclass(frozen=True)
class Received:
    """One request as the server read it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Exchange:
    """The server side of one request: what a reply script reads and writes to."""

    def __init__(
        self,
        server: FakeOpenAIServer,
        conn: h11.Connection,
        stream: SocketStream,
        request: Received,
    ):
        self.server = server
        self.request = request
        self._conn = conn
        self._stream = stream
        self.close_after = False

    async def head(self, status: int, headers: Iterable[tuple[str, str]] = ()) -> None:
        reason = HTTPStatus(status).phrase.encode()
        event = h11.Response(status_code=status, headers=list(headers), reason=reason)
        await self._stream.send(self._conn.send(event))

    async def body(self, data: bytes) -> None:
        """Send `data` as its own piece (its own chunk on the wire)."""
        await self._stream.send(self._conn.send(h11.Data(data=data)))

    async def end(self) -> None:
        await self._stream.send(self._conn.send(h11.EndOfMessage()))

    async def abort(self) -> None:
        """Close the connection now, whatever state the answer is in."""
        self.close_after = True
        await self._stream.aclose()

    async def wait_for_disconnect(self) -> None:
        """Return once the client closed the connection."""
        try:
            while await self._stream.receive():
                pass
        except _GONE:
            pass
        self.close_after = True
        self.server.disconnected.set()


class FakeOpenAIServer:
    """Serves queued replies on 127.0.0.1; an empty queue answers 500 `no reply queued`.

    `stalled` is set when a `stall()` reply has sent what it was told to;
    `disconnected` when a stalled client went away.
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self.requests: list[Received] = []
        self.connections = 0
        self.stalled = anyio.Event()
        self.disconnected = anyio.Event()
        self._replies: deque[Reply] = deque()
        self._arrived = anyio.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    async def wait_for_requests(self, count: int) -> None:
        """Return once `count` requests arrived in all (fails the test after 5 s)."""
        with anyio.fail_after(WAIT):
            while len(self.requests) < count:
                await self._arrived.wait()

    async def serve(self, stream: SocketStream) -> None:
        self.connections += 1
        conn = h11.Connection(h11.SERVER)
        async with stream:
            try:
                while await self._exchange(conn, stream):
                    conn.start_next_cycle()
            except (*_GONE, h11.ProtocolError):
                pass

    async def _exchange(self, conn: h11.Connection, stream: SocketStream) -> bool:
        request = await self._read(conn, stream)
        if request is None:
            return False
        self.requests.append(request)
        self._arrived.set()
        self._arrived = anyio.Event()
        reply = self._replies.popleft() if self._replies else error_reply(500, "no reply queued")
        exchange = Exchange(self, conn, stream, request)
        await reply(exchange)
        return not exchange.close_after and conn.our_state is h11.DONE

    async def _read(self, conn: h11.Connection, stream: SocketStream) -> Received | None:
        head: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    conn.receive_data(await stream.receive())
                except anyio.EndOfStream:
                    conn.receive_data(b"")
            elif isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage) and head is not None:
                headers = {k.decode().lower(): v.decode() for k, v in head.headers}
                return Received(head.method.decode(), head.target.decode(), headers, bytes(body))
            else:
                return None


@asynccontextmanager
async def running_server() -> AsyncIterator[FakeOpenAIServer]:
    """A `FakeOpenAIServer` listening until the block ends."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    server = FakeOpenAIServer(listener.extra(SocketAttribute.local_port))
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, server.serve)
        try:
            yield server
        finally:
            group.cancel_scope.cancel()


async def closed_port() -> int:
    """A loopback port nothing listens on (connections are refused)."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(SocketAttribute.local_port)
    await listener.aclose()
    return port


# -- replies ---------------------------------------------------------------


def raw_reply(
    status: int, pieces: Iterable[bytes], headers: Iterable[tuple[str, str]] = ()
) -> Reply:
    """Status, headers, then each byte piece as its own chunk."""
    parts = list(pieces)
    header_list = list(headers)

    async def reply(exchange: Exchange) -> None:
        await exchange.head(status, header_list)
        for part in parts:
            await exchange.body(part)
        await exchange.end()

    return reply


def json_reply(data: Any, status: int = 200, headers: Iterable[tuple[str, str]] = ()) -> Reply:
    body = json.dumps(data).encode()
    return raw_reply(status, [body], [("content-type", "application/json"), *headers])


def error_reply(status: int, message: str, headers: Iterable[tuple[str, str]] = ()) -> Reply:
    """An OpenAI-style error body: `{"error": {"message", "type"}}`."""
    return json_reply({"error": {"message": message, "type": "test"}}, status, headers)


def completion(text: str | None = "", tool_calls: list[dict[str, Any]] | None = None) -> Any:
    """A whole `chat.completion` body."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    finish = "tool_calls" if tool_calls else "stop"
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def chunk(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """One `chat.completion.chunk`."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def sse_reply(*events: dict[str, Any] | str, done: bool = True) -> Reply:
    """An SSE stream: each event (a dict is JSON-encoded) as `data: ...` in its own piece."""
    pieces = [
        f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n".encode()
        for event in events
    ]
    if done:
        pieces.append(b"data: [DONE]\n\n")
    return raw_reply(200, pieces, [("content-type", "text/event-stream")])


def drop(*pieces: bytes) -> Reply:
    """Start an SSE answer, send `pieces`, then close the connection mid-body."""

    async def reply(exchange: Exchange) -> None:
        await exchange.head(200, [("content-type", "text/event-stream")])
        for piece in pieces:
            await exchange.body(piece)
        await exchange.abort()

    return reply


def stall(*pieces: bytes, stream: bool = True) -> Reply:
    """Send the head (and `pieces`), then hold the request until the client disconnects."""
    content_type = "text/event-stream" if stream else "application/json"

    async def reply(exchange: Exchange) -> None:
        await exchange.head(200, [("content-type", content_type)])
        for piece in pieces:
            await exchange.body(piece)
        exchange.server.stalled.set()
        await exchange.wait_for_disconnect()

    return reply
