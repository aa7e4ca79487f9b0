from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from starlette.websockets import WebSocketDisconnect, WebSocketState
from websockets.exceptions import ConnectionClosed, InvalidStatus

from dsh.host.host import Host
from dsh.persistence.errors import StorageError
from dsh.session.errors import FlushError
from dsh.web import WebServer, WebSettings, create_app
from dsh.web.live import Subscription
from dsh.web.sockets import _send_frames, close
from dsh.web.state import WebState
from tests.support.deadlines import WAIT

from .conftest import (
    AUTH,
    MARKED,
    PLAIN,
    TOKEN,
    Gate,
    Running,
    StorageDouble,
    receive_json,
    wait_until,
)

pytestmark = pytest.mark.anyio


def state_of(served: Running) -> WebState:
    state = served.server.app.state.web
    assert isinstance(state, WebState)
    return state


async def test_hello_then_raw_events_then_one_sidecar_after_the_flush(
    host: Host, served: Running
) -> None:
    session = (await host.create_session()).session
    async with served.connect(session.id) as ws:
        assert await receive_json(ws) == {"kind": "hello", "tail": 0}
        host.live.append(session, MARKED, {"x": 1})
        host.live.append(session, PLAIN, {})
        first, second = await receive_json(ws), await receive_json(ws)
        assert first == {"kind": "event", "event": session.events[0].to_dict()}
        assert second["event"]["seq"] == 1 and "sidecar" not in second
        assert await host.live.flush(session) is True
        assert await receive_json(ws) == {
            "kind": "event",
            "event": session.events[0].to_dict(),
            "sidecar": {"for": "event", "view": {"marked": {"x": 1}, "seq": 0}},
        }
        assert await host.live.flush(session) is True
        host.live.append(session, PLAIN, {"after": True})
        follow = await receive_json(ws)
        assert follow["event"]["seq"] == 2 and "sidecar" not in follow


async def test_a_failed_flush_sends_no_sidecar(host: Host, served: Running) -> None:
    session = (await host.create_session()).session
    gate = Gate()
    host.live.add_listener(session, gate)
    async with served.connect(session.id) as ws:
        await receive_json(ws)
        host.live.append(session, MARKED, {})
        await receive_json(ws)
        gate.outcomes = [StorageError("disk on fire")]
        with pytest.raises(FlushError):
            await host.live.flush(session)
        host.live.append(session, PLAIN, {})
        follow = await receive_json(ws)
        assert follow["event"]["seq"] == 1 and "sidecar" not in follow


async def test_watching_a_cold_session_says_hello_with_the_stored_tail_and_streams_after_resume(
    host: Host, served: Running
) -> None:
    session = (await host.create_session()).session
    host.live.append(session, MARKED, {})
    await host.close_session(session.id)
    async with served.connect(session.id) as ws:
        assert await receive_json(ws) == {"kind": "hello", "tail": 1}
        assert host.agent(session.id) is None
        async with httpx.AsyncClient(base_url=served.base, headers=AUTH) as http:
            response = await http.post(f"/api/sessions/{session.id}/resume")
            assert response.status_code == 200
        end_seed = await receive_json(ws)
        assert end_seed["event"] == {
            "seq": 1,
            "type": "session/end-seed",
            "time": end_seed["event"]["time"],
            "data": {},
        }
        # Then it says the Session is live again (its root agent is published).
        assert await receive_json(ws) == {"kind": "live", "live": True}
        live = host.live.get(session.id)
        host.live.append(live, MARKED, {"new": True})
        await host.live.flush(live)
        raw = await receive_json(ws)
        assert raw["event"]["seq"] == 2 and "sidecar" not in raw
        # No sidecar for the stored seq 0 (its view came with the cold history):
        # the next frame is the new receipt's.
        sidecar = await receive_json(ws)
        assert sidecar["event"]["seq"] == 2 and sidecar["sidecar"]["view"]["seq"] == 2


async def test_deleting_a_session_ends_its_streams_with_4404(host: Host, served: Running) -> None:
    watched = (await host.create_session()).session
    other = (await host.create_session()).session
    async with served.connect(watched.id) as ws, served.connect(other.id) as kept:
        assert (await receive_json(ws))["kind"] == "hello"
        assert (await receive_json(kept))["kind"] == "hello"
        async with httpx.AsyncClient(base_url=served.base, headers=AUTH) as http:
            response = await http.delete(f"/api/sessions/{watched.id}")
            assert response.status_code == 204
        # Closed first (it goes cold: the watcher is told), then gone.
        assert await receive_json(ws) == {"kind": "live", "live": False}
        with pytest.raises(ConnectionClosed) as closed:
            with anyio.fail_after(WAIT):
                await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404
        host.live.append(other, PLAIN, {})
        assert (await receive_json(kept))["event"]["seq"] == 0  # the others stream on
    assert state_of(served).hub.subscribers(watched.id) == 0


async def test_streamed_text_arrives_as_delta_frames(host: Host, served: Running) -> None:
    agent = await host.create_session()
    async with served.connect(agent.session.id) as ws:
        await receive_json(ws)
        agent.submit("hi")
        frames = [await receive_json(ws) for _ in range(5)]
    assert [frame["kind"] for frame in frames] == ["event", "delta", "delta", "event", "event"]
    assert [frame["text"] for frame in frames if frame["kind"] == "delta"] == ["Hel", "lo"]


async def test_what_a_client_sends_is_ignored(host: Host, served: Running) -> None:
    session = (await host.create_session()).session
    async with served.connect(session.id) as ws:
        await receive_json(ws)
        await ws.send("anything")
        await ws.send(b"\x00")
        host.live.append(session, PLAIN, {})
        assert (await receive_json(ws))["event"]["seq"] == 0


async def test_a_disconnected_client_is_unsubscribed(host: Host, served: Running) -> None:
    session = (await host.create_session()).session
    hub = state_of(served).hub
    async with served.connect(session.id) as ws:
        await receive_json(ws)
        assert hub.subscribers(session.id) == 1
    await wait_until(lambda: hub.subscribers(session.id) == 0)


async def test_a_client_that_falls_behind_is_closed_with_1013_and_appends_never_wait(
    host: Host, settings: WebSettings
) -> None:
    tight = settings.model_copy(update={"port": 0, "queue_frames": 4})
    app = create_app(host, tight)
    server = WebServer(app, tight)
    session = (await host.create_session()).session
    async with anyio.create_task_group() as group:
        group.start_soon(server.run_until_stopped)
        with anyio.fail_after(WAIT):
            await server.listening.wait()
        running = Running(server, f"http://127.0.0.1:{server.port}")
        async with running.connect(session.id) as ws:
            await receive_json(ws)
            for n in range(50):  # one synchronous burst: no frame can be sent meanwhile
                host.live.append(session, PLAIN, {"n": n})
            assert len(session) == 50
            received = 0
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await receive_json(ws)
                    received += 1
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
            assert received <= 4
        hub = app.state.web.hub
        await wait_until(lambda: hub.subscribers(session.id) == 0)
        server.stop()


async def test_closing_the_app_state_says_going_away(host: Host, served: Running) -> None:
    session = (await host.create_session()).session
    async with served.connect(session.id) as ws:
        await receive_json(ws)
        state_of(served).close()
        with pytest.raises(ConnectionClosed) as closed:
            await receive_json(ws)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001


async def refused_status(served: Running, session_id: str, **kwargs: Any) -> int:
    with pytest.raises(InvalidStatus) as refused:
        async with served.connect(session_id, **kwargs):
            pass
    return refused.value.response.status_code


async def test_an_unknown_session_is_refused_with_404(served: Running) -> None:
    assert await refused_status(served, "nobody") == 404


async def test_an_invalid_session_id_is_refused_with_404(served: Running) -> None:
    assert await refused_status(served, "bad.id") == 404


async def test_a_storage_failure_on_a_cold_session_is_refused_with_503(
    served: Running, backend: StorageDouble
) -> None:
    backend.errors["cursor"] = StorageError("offline")
    assert await refused_status(served, "cold") == 503


async def test_an_unexpected_failure_is_refused_with_500(
    served: Running, backend: StorageDouble
) -> None:
    backend.errors["cursor"] = RuntimeError("bug")
    assert await refused_status(served, "cold") == 500


async def test_a_websocket_without_the_token_is_refused(host: Host, served: Running) -> None:
    session = (await host.create_session()).session
    from websockets.asyncio.client import connect

    with pytest.raises(InvalidStatus) as refused:
        async with connect(served.ws_url(session.id, token=None), origin=served.origin()):
            pass
    assert refused.value.response.status_code == 401


async def test_a_refused_websocket_leaves_no_error_in_the_log(
    host: Host, served: Running, caplog: pytest.LogCaptureFixture
) -> None:
    session = (await host.create_session()).session
    with caplog.at_level("INFO"):
        for _ in range(3):
            assert await refused_status(served, session.id, origin="http://evil.example") == 403
    assert "rejected" in caplog.text
    assert [record for record in caplog.records if record.levelname == "ERROR"] == []


async def test_a_websocket_from_another_origin_is_refused(host: Host, served: Running) -> None:
    session = (await host.create_session()).session
    status = await refused_status(served, session.id, origin="http://evil.example")
    assert status == 403


async def test_a_websocket_with_a_rebound_host_is_refused(host: Host, served: Running) -> None:
    session = (await host.create_session()).session
    request = (
        f"GET /api/sessions/{session.id}/live?token={TOKEN} HTTP/1.1\r\n"
        "Host: evil.example\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    with anyio.fail_after(WAIT):
        async with await anyio.connect_tcp("127.0.0.1", served.port) as stream:
            await stream.send(request.encode())
            head = b""
            while b"\r\n" not in head:
                head += await stream.receive()
    assert head.split(b" ")[1] == b"421"


async def test_the_real_server_refuses_a_rebound_host_for_static_files_too(
    served: Running,
) -> None:
    async with httpx.AsyncClient(base_url=served.base) as http:
        assert (await http.get("/", headers={"Host": "evil.example"})).status_code == 421
        assert (await http.get("/")).status_code == 200


class FakeSocket:
    """Just enough of a Starlette WebSocket for the sender and the closer."""

    def __init__(self, client: WebSocketState, application: WebSocketState) -> None:
        self.client_state = client
        self.application_state = application
        self.closed_with: int | None = None

    async def send_text(self, text: str) -> None:
        raise WebSocketDisconnect(1006)

    async def close(self, code: int) -> None:
        self.closed_with = code


async def test_a_client_that_vanishes_mid_send_ends_the_sender_quietly() -> None:
    subscription = Subscription("s", 0, 4, lambda: None)
    subscription.put("frame")
    socket = FakeSocket(WebSocketState.CONNECTED, WebSocketState.CONNECTED)
    with anyio.CancelScope() as done:
        await _send_frames(socket, subscription, done)  # type: ignore[arg-type]
    assert done.cancel_called
    subscription.close()


@pytest.mark.parametrize(
    ("client", "application", "expected"),
    [
        (WebSocketState.CONNECTED, WebSocketState.CONNECTED, 1013),
        (WebSocketState.DISCONNECTED, WebSocketState.CONNECTED, None),
        (WebSocketState.CONNECTED, WebSocketState.DISCONNECTED, None),
    ],
)
async def test_the_server_says_why_only_while_both_sides_are_connected(
    client: WebSocketState, application: WebSocketState, expected: int | None
) -> None:
    subscription = Subscription("s", 0, 4, lambda: None)
    subscription.end(1013)
    socket = FakeSocket(client, application)
    await close(socket, subscription)  # type: ignore[arg-type]
    assert socket.closed_with == expected
    subscription.close()
