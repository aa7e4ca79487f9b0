"""A real `WebServer` with the limits a test chooses, and a raw client that misbehaves."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream

from dsh.host import Host
from dsh.web import WebServer, WebSettings, create_app

StartServer = Callable[..., Awaitable[WebServer]]
CLOSED = (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError)


@pytest.fixture
async def guarded(host: Host, settings: WebSettings) -> AsyncIterator[StartServer]:
    """`await guarded(descriptors=N, **settings)`: a server listening on a free port."""
    servers: list[WebServer] = []
    async with anyio.create_task_group() as group:

        async def start(descriptors: int | None = None, **changes: Any) -> WebServer:
            live = settings.model_copy(update={"port": 0, **changes})
            server = WebServer(create_app(host, live), live, descriptors=descriptors)
            group.start_soon(server.run_until_stopped)
            with anyio.fail_after(5):
                await server.listening.wait()
            servers.append(server)
            return server

        yield start
        for server in servers:
            server.stop()


async def connect(server: WebServer) -> SocketStream:
    return await anyio.connect_tcp("127.0.0.1", server.port)


async def closed_by_server(
    stream: SocketStream, *, trickle: bytes = b"", every: float = 0.05
) -> bytes:
    """Read (sending `trickle` every `every` seconds) until the server closes; what it sent.

    Fails after 5 seconds: a connection the server holds forever is the bug.
    """
    received = b""
    with anyio.fail_after(5):
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
    with anyio.fail_after(5):
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
