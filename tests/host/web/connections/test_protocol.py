from __future__ import annotations

import asyncio
import json

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect

from dsh.web import WebServer
from dsh.web.connections.protocol import Relay
from tests.support.deadlines import WAIT

from ..conftest import AUTH, TOKEN, wait_until
from .conftest import Connect, StartServer, closed_by_server, read_response, waited_at_least

pytestmark = pytest.mark.anyio

HEAD = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def request(
    server: WebServer, path: str = "/api/health", *, auth: bool = True, extra: str = ""
) -> bytes:
    token = f"Authorization: Bearer {TOKEN}\r\n" if auth else ""
    host = f"Host: 127.0.0.1:{server.port}\r\n"
    return f"GET {path} HTTP/1.1\r\n{host}{token}{extra}\r\n".encode()


async def test_a_head_that_never_ends_is_cut_at_the_header_deadline(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(header_timeout=0.3)
    # The deadline runs from the server's accept, which may come before `connect()`
    # returns here (client and server share this event loop): start counting first.
    started = anyio.current_time()
    stream = await connect(server)
    await stream.send(HEAD)
    # Trickling more header lines does not buy time: that is what slowloris does.
    assert await closed_by_server(stream, trickle=b"X-Slow: 1\r\n") == b""
    assert waited_at_least(started, 0.3)
    await stream.aclose()
    assert server.pool.stats["head_timeout"] == 1
    await wait_until(lambda: server.pool.held == 0)


async def test_a_connection_that_sends_nothing_is_cut_at_the_header_deadline(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(header_timeout=0.2)
    stream = await connect(server)
    assert await closed_by_server(stream) == b""
    await stream.aclose()
    assert server.pool.stats["head_timeout"] == 1


async def test_a_body_that_never_ends_is_cut_at_the_body_deadline(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(header_timeout=5.0, body_timeout=0.3)
    stream = await connect(server)
    head = (
        f"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n{"
    )
    await stream.send(head.encode())
    assert await closed_by_server(stream, trickle=b" ") == b""
    await stream.aclose()
    assert server.pool.stats["body_timeout"] == 1 and server.pool.stats["head_timeout"] == 0


async def test_a_kept_alive_connection_gets_a_new_header_deadline_per_request(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(header_timeout=0.4)
    stream = await connect(server)
    await stream.send(request(server))
    first = await read_response(stream)
    assert first.startswith(b"HTTP/1.1 200") and b'"ok":true' in first
    # The second request dribbles in; uvicorn's keep-alive timer stops at the first
    # byte, the header deadline (counted from the end of the first response) does not.
    await stream.send(b"GET /api/health HTTP/1.1\r\n")
    assert await closed_by_server(stream, trickle=b"X: y\r\n") == b""
    await stream.aclose()
    assert server.pool.stats["head_timeout"] == 1


async def test_prompt_requests_are_answered_and_authenticate_their_connection(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(header_timeout=0.5)
    stream = await connect(server)
    await stream.send(request(server))
    assert (await read_response(stream)).startswith(b"HTTP/1.1 200")
    assert server.pool.stats["authenticated"] == 1 and server.pool.unauthenticated == 0
    await stream.aclose()
    await wait_until(lambda: server.pool.held == 0)


@pytest.mark.parametrize(
    ("path", "extra", "authenticated"),
    [
        ("/", "", 0),
        (f"/?token={TOKEN}", "", 1),
        ("/api/health", "Authorization: Bearer wrong\r\n", 0),
        ("/api/health?token=wrong", "", 0),
    ],
)
async def test_only_the_right_token_authenticates_a_connection(
    guarded: StartServer, connect: Connect, path: str, extra: str, authenticated: int
) -> None:
    server = await guarded()
    stream = await connect(server)
    await stream.send(request(server, path, auth=False, extra=extra))
    await read_response(stream)
    assert server.pool.stats["authenticated"] == authenticated
    assert server.pool.unauthenticated == 1 - authenticated
    await stream.aclose()


async def test_a_websocket_outlives_the_header_deadline_and_frees_its_place_when_closed(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(header_timeout=0.3)
    base = f"http://127.0.0.1:{server.port}"
    async with httpx.AsyncClient(base_url=base, headers=AUTH) as http:
        session = (await http.post("/api/sessions")).json()["session"]["id"]
    url = f"ws://127.0.0.1:{server.port}/api/sessions/{session}/live?token={TOKEN}"
    async with ws_connect(url, origin=base, open_timeout=5) as ws:  # type: ignore[arg-type]
        assert json.loads(await ws.recv())["kind"] == "hello"
        # A slowloris opened after the WebSocket is cut at its deadline, so the
        # WebSocket's own header deadline, had it one, has passed too.
        stream = await connect(server)
        await stream.send(HEAD)
        await closed_by_server(stream)
        await stream.aclose()
        with anyio.fail_after(WAIT):
            await (await ws.ping())
        assert server.pool.stats["head_timeout"] == 1
        assert server.pool.held == 1 and server.pool.unauthenticated == 0
    await wait_until(lambda: server.pool.held == 0)


async def test_a_refused_websocket_frees_its_place(guarded: StartServer, connect: Connect) -> None:
    server = await guarded()
    stream = await connect(server)
    upgrade = (
        f"GET /api/sessions/x/live HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        "Upgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    )
    await stream.send(upgrade.encode())
    answer = await closed_by_server(stream)
    assert answer.startswith(b"HTTP/1.1 401")
    await stream.aclose()
    await wait_until(lambda: server.pool.held == 0)
    assert server.pool.stats["authenticated"] == 0


async def test_a_full_pool_evicts_the_oldest_stranger_to_serve_a_newcomer(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(max_connections=4, max_unauthenticated=2)
    assert (server.limits.total, server.limits.unauthenticated) == (4, 2)
    oldest, younger = await connect(server), await connect(server)
    await oldest.send(HEAD)
    await younger.send(HEAD)
    await wait_until(lambda: server.pool.unauthenticated == 2)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
        answer = await http.get("/api/health", headers={**AUTH, "Connection": "close"})
    assert answer.status_code == 200
    assert await closed_by_server(oldest) == b""
    assert server.pool.stats["evicted"] == 1 and server.pool.unauthenticated == 1
    for stream in (oldest, younger):
        await stream.aclose()


async def test_a_full_pool_evicts_a_stranger_partway_through_a_request_before_a_quiet_one(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(max_connections=4, max_unauthenticated=2)
    quiet = await connect(server)  # the older one, and it has not sent anything yet
    await wait_until(lambda: server.pool.unauthenticated == 1)
    dribbler = await connect(server)
    await dribbler.send(HEAD)
    await wait_until(lambda: server.pool.partway == 1)
    newcomer = await connect(server)
    assert await closed_by_server(dribbler) == b""
    # The quiet client was not pushed out by the newcomer: it shows its token now.
    await quiet.send(request(server))
    assert (await read_response(quiet)).startswith(b"HTTP/1.1 200")
    assert server.pool.stats["evicted"] == 1 and server.pool.partway == 0
    assert server.pool.stats["authenticated"] == 1
    for stream in (quiet, dribbler, newcomer):
        await stream.aclose()


async def test_a_pool_full_of_authenticated_connections_refuses_with_503(
    guarded: StartServer, connect: Connect
) -> None:
    server = await guarded(max_connections=2, max_unauthenticated=1)
    members = []
    for _ in range(2):
        members.append(await connect(server))
        await members[-1].send(request(server))
        await read_response(members[-1])
    assert server.pool.held == 2 and server.pool.unauthenticated == 0
    refused = await connect(server)
    answer = await closed_by_server(refused)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in head
    assert json.loads(body)["error"]["code"] == "server_busy"
    assert server.pool.stats["refused"] == 1
    for stream in (*members, refused):
        await stream.aclose()


class Inner(asyncio.Protocol):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def data_received(self, data: bytes) -> None:
        self.calls.append(f"data {data!r}")

    def eof_received(self) -> bool | None:
        self.calls.append("eof")
        return True

    def pause_writing(self) -> None:
        self.calls.append("pause")

    def resume_writing(self) -> None:
        self.calls.append("resume")

    def connection_lost(self, exc: Exception | None) -> None:
        self.calls.append("lost")
        raise RuntimeError("the inner protocol failed")


def test_the_relay_forwards_every_event_and_reports_the_loss_even_if_inner_fails() -> None:
    inner, lost = Inner(), []
    relay = Relay(inner, lambda: lost.append(True))
    relay.data_received(b"x")
    assert relay.eof_received() is True
    relay.pause_writing()
    relay.resume_writing()
    with pytest.raises(RuntimeError):
        relay.connection_lost(None)
    assert inner.calls == ["data b'x'", "eof", "pause", "resume", "lost"]
    assert lost == [True]
