from __future__ import annotations

import asyncio
import errno
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack

import anyio
import pytest
from anyio.abc import SocketStream

from dsh.web.connections import acceptor as acceptor_module
from dsh.web.connections.acceptor import BUSY_RESPONSE, RETRY, Acceptor
from dsh.web.connections.pool import ConnectionLimits, ConnectionPool, Ticket
from tests.support.deadlines import WAIT

from ..conftest import wait_until
from .conftest import closed_by_server, waited_at_least

pytestmark = pytest.mark.anyio


class ExhaustibleSocket(socket.socket):
    """A listening socket whose next `accept()` calls fail with the errnos in `failures`."""

    def __init__(self) -> None:
        super().__init__(socket.AF_INET, socket.SOCK_STREAM)
        self.failures: list[int] = []

    def accept(self) -> tuple[socket.socket, object]:
        if self.failures:
            code = self.failures.pop(0)
            raise OSError(code, os.strerror(code))
        return super().accept()


class Echo(asyncio.Protocol):
    """Echoes what it gets; holds its ticket like the real protocol does."""

    def __init__(self, ticket: Ticket) -> None:
        self.ticket = ticket
        self.transport: asyncio.Transport | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.ticket.attach(transport.abort)

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.ticket.release()


class Listener:
    """One acceptor's socket and pool; the raw clients it served, and their echoes.

    `close()` closes every client and server-side connection, so that a test
    that fails half-way leaks no socket into the tests after it.
    """

    def __init__(self, sock: ExhaustibleSocket, pool: ConnectionPool, events: list[str]) -> None:
        self.sock = sock
        self.pool = pool
        self.events = events
        self.port: int = sock.getsockname()[1]
        self.echoes: list[Echo] = []
        self._clients = AsyncExitStack()

    def protocol(self, ticket: Ticket) -> Echo:
        echo = Echo(ticket)
        self.echoes.append(echo)
        return echo

    async def connect(self) -> SocketStream:
        stream = await anyio.connect_tcp("127.0.0.1", self.port)
        return await self._clients.enter_async_context(stream)

    async def close(self) -> None:
        await self._clients.aclose()
        made = [(echo, echo.transport) for echo in self.echoes if echo.transport is not None]
        for _, transport in made:
            transport.abort()
        await wait_until(lambda: all(echo.lost for echo, _ in made))


StartListener = Callable[..., Listener]


@pytest.fixture
async def listen() -> AsyncIterator[StartListener]:
    started: list[tuple[Acceptor, Listener]] = []

    def start(total: int = 8, unauthenticated: int = 4, batch: int = 4) -> Listener:
        events: list[str] = []
        pool = ConnectionPool(ConnectionLimits(total, unauthenticated), on_event=events.append)
        sock = ExhaustibleSocket()
        sock.bind(("127.0.0.1", 0))
        listener = Listener(sock, pool, events)
        acceptor = Acceptor(sock, pool, listener.protocol, backlog=16, batch=batch)
        acceptor.start()
        started.append((acceptor, listener))
        return listener

    yield start
    for acceptor, listener in started:
        try:
            acceptor.close()
            await acceptor.wait_closed()
            await listener.close()
        finally:
            listener.sock.close()


async def echoes(stream: SocketStream) -> bool:
    await stream.send(b"ping")
    with anyio.fail_after(WAIT):
        return await stream.receive() == b"ping"


async def test_accepted_connections_get_their_protocol_and_a_ticket(listen: StartListener) -> None:
    listener = listen()
    async with await listener.connect() as stream:
        assert await echoes(stream)
        assert listener.pool.held == 1
    await wait_until(lambda: listener.pool.held == 0)


async def test_a_refused_connection_is_told_503_server_busy(listen: StartListener) -> None:
    listener = listen(total=2, unauthenticated=1)
    for _ in range(2):
        ticket = listener.pool.admit()
        assert ticket is not None
        ticket.authenticate()
    async with await listener.connect() as stream:
        await stream.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert await closed_by_server(stream) == BUSY_RESPONSE
    assert listener.events == ["refused"]


async def test_out_of_descriptors_evicts_the_oldest_stranger_and_accepts_into_its_place(
    listen: StartListener,
) -> None:
    listener = listen()
    stranger = await listener.connect()
    assert await echoes(stranger)
    listener.sock.failures = [errno.EMFILE]
    async with await listener.connect() as newcomer:
        assert await echoes(newcomer)
        assert await closed_by_server(stranger) == b""
    await stranger.aclose()
    assert listener.events == ["descriptors_exhausted", "evicted"]


async def test_out_of_descriptors_with_nobody_to_evict_refuses_through_the_spare(
    listen: StartListener,
) -> None:
    listener = listen()
    listener.sock.failures = [errno.EMFILE]
    async with await listener.connect() as refused:
        assert await closed_by_server(refused) == BUSY_RESPONSE
    assert listener.events == ["descriptors_exhausted", "refused"]
    async with await listener.connect() as later:  # the spare was taken back: all is normal
        assert await echoes(later)


@pytest.mark.parametrize("spare", ["taken", "unavailable"])
async def test_out_of_descriptors_without_a_spare_pauses_accepting_then_resumes(
    listen: StartListener, monkeypatch: pytest.MonkeyPatch, spare: str
) -> None:
    if spare == "unavailable":
        monkeypatch.setattr(acceptor_module, "_open_spare", lambda: None)
    listener = listen()
    # "taken": the spare is closed, but the accept into it fails too.
    listener.sock.failures = [errno.EMFILE] * (1 if spare == "unavailable" else 2)
    started = anyio.current_time()
    async with await listener.connect() as stream:
        assert await echoes(stream)
    assert waited_at_least(started, RETRY)
    assert listener.events == ["descriptors_exhausted"]


async def test_an_unexpected_accept_error_is_counted_and_accepting_resumes(
    listen: StartListener,
) -> None:
    listener = listen()
    listener.sock.failures = [errno.EINVAL]
    async with await listener.connect() as stream:
        assert await echoes(stream)
    assert listener.events == ["accept_failed"]


async def test_a_peer_that_left_before_its_accept_is_skipped(listen: StartListener) -> None:
    listener = listen()
    listener.sock.failures = [errno.ECONNABORTED]
    async with await listener.connect() as stream:
        assert await echoes(stream)
    assert listener.events == []


async def test_closing_cancels_connections_still_being_set_up() -> None:
    events: list[str] = []
    pool = ConnectionPool(ConnectionLimits(4, 2), on_event=events.append)
    sock = socket.socket()
    ours, theirs = socket.socketpair()
    with sock, ours, theirs:
        acceptor = Acceptor(sock, pool, Echo, backlog=4)
        sock.bind(("127.0.0.1", 0))
        acceptor.start()
        try:
            acceptor._admit(ours)
            assert pool.held == 1
            acceptor.close()
            acceptor.close()
            await acceptor.wait_closed()
            assert pool.held == 0 and ours.fileno() == -1
        finally:
            acceptor.close()


@pytest.mark.parametrize(
    ("error", "logged"),
    [(ConnectionResetError("the peer left"), False), (RuntimeError("a bug"), True)],
)
async def test_a_connection_that_fails_while_being_set_up_gives_its_ticket_back(
    error: Exception, logged: bool, caplog: pytest.LogCaptureFixture
) -> None:
    pool = ConnectionPool(ConnectionLimits(4, 2))

    def failing(ticket: Ticket) -> asyncio.Protocol:
        raise error

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    acceptor = Acceptor(sock, pool, failing, backlog=4)
    acceptor.start()
    try:
        async with await anyio.connect_tcp("127.0.0.1", sock.getsockname()[1]) as stream:
            assert await closed_by_server(stream) == b""
        assert pool.stats["admitted"] == 1 and pool.held == 0
    finally:
        acceptor.close()
        await acceptor.wait_closed()
        sock.close()
    failures = [r for r in caplog.records if "setting up an accepted connection" in r.message]
    assert [r.exc_info[1] for r in failures if r.exc_info] == ([error] if logged else [])


def test_the_busy_answer_is_a_complete_http_response_in_the_api_error_shape() -> None:
    head, _, body = BUSY_RESPONSE.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert f"Content-Length: {len(body)}".encode() in head
    assert b'"code": "server_busy"' in body


def test_no_spare_descriptor_when_none_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(*_: object) -> int:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(acceptor_module.os, "open", exhausted)
    assert acceptor_module._open_spare() is None


async def test_closing_while_accepting_is_paused_cancels_the_retry(
    listen: StartListener,
) -> None:
    listener = listen()
    listener.sock.failures = [errno.EINVAL]
    stream = await listener.connect()
    await wait_until(lambda: listener.events == ["accept_failed"])
    acceptor = Acceptor(listener.sock, listener.pool, Echo, backlog=4)
    acceptor.start()
    try:
        acceptor._pause()
        acceptor.close()
        assert acceptor._retry is None and acceptor._spare is None
    finally:
        acceptor.close()
    await stream.aclose()


def test_refusing_a_client_that_is_gone_is_quiet() -> None:
    ours, theirs = socket.socketpair()
    theirs.close()
    Acceptor._refuse(ours)
    assert ours.fileno() == -1
