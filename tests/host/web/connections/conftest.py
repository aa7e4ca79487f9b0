"""A real `WebServer` with the limits a test chooses, and a raw client that misbehaves.

Every raw client stream (`connect`) is closed when its test ends, however it
ends: a stream left open by a failed assertion would otherwise be collected,
and reported as an unclosed socket, during some later test.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream

from dsh.host.host import Host
from dsh.web import WebServer, WebSettings, create_app
from tests.support.deadlines import WAIT

StartServer = Callable[..., Awaitable[WebServer]]
Connect = Callable[[WebServer], Awaitable[SocketStream]]
CLOSED = (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError)
# asyncio runs a timer once the clock is within its resolution of the due time.
CLOCK_RESOLUTION = time.get_clock_info("monotonic").resolution


@pytest.fixture
async def guarded(host: Host, settings: WebSettings) -> AsyncIterator[StartServer]:
    """`await guarded(descriptors=N, **settings)`: a server listening on a free port."""
    servers: list[WebServer] = []
    async with anyio.create_task_group() as group:

        async def start(descriptors: int | None = None, **changes: Any) -> WebServer:
            live = settings.model_copy(update={"port": 0, **changes})
            server = WebServer(create_app(host, live), live, descriptors=descriptors)
            group.start_soon(server.run_until_stopped)
            with anyio.fail_after(WAIT):
                await server.listening.wait()
            servers.append(server)
            return server

        yield start
        for server in servers:
            server.stop()


@pytest.fixture
async def connect(guarded: StartServer) -> AsyncIterator[Connect]:
    """`await connect(server)`: a raw client stream, closed after the test whatever happened.

    It depends on `guarded` so that the clients are closed before the servers stop.
    """
    async with AsyncExitStack() as streams:

        async def open_stream(server: WebServer) -> SocketStream:
            stream = await anyio.connect_tcp("127.0.0.1", server.port)
            return await streams.enter_async_context(stream)

        yield open_stream


def waited_at_least(started: float, delay: float) -> bool:
    """Whether `delay` seconds of the event loop's clock have passed since `started`.

    For checking that a timer armed after `started` did not fire early: take
    `started` before whatever arms it (for the server's deadlines: before
    `connect()`, since the server arms them when it accepts the connection).
    """
    return anyio.current_time() - started >= delay - CLOCK_RESOLUTION


async def closed_by_server(
    stream: SocketStream, *, trickle: bytes = b"", every: float = 0.05
) -> bytes:
    """Read (sending `trickle` every `every` seconds) until the server closes; what it sent.

    Fails after 5 seconds: a connection the server holds forever is the bug.
    """
    received = b""
    with anyio.fail_after(WAIT):
        while True:
            try:
                with anyio.move_on_after(every):
                    received += await stream.receive()
                    continue
                if trickle:
                    await stream.send(trickle)
            except CLOSED:
                return received


async def read_response(stream: SocketStream) -> bytes:
    """One whole response whose body length is given by Content-Length."""
    data = b""
    with anyio.fail_after(WAIT):
        while b"\r\n\r\n" not in data:
            data += await stream.receive()
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += await stream.receive()
    return head + b"\r\n\r\n" + body
