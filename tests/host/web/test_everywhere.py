"""`WS /api/live` and the unread API: every Session's alerts, for every page."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from dsh.host.host import Host
from dsh.session.log import Session
from dsh.web.state import WebState
from tests.host.fixtures.plugins import Alerter

from .conftest import AUTH, TOKEN, Running, receive_json

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def alerter(host: Host) -> None:
    host.pm.register(Alerter(), name="test-alerter")


def live_url(served: Running, query: str = f"token={TOKEN}") -> str:
    return f"ws://127.0.0.1:{served.port}/api/live?{query}"


def everywhere(served: Running, query: str = f"token={TOKEN}", **kwargs: Any) -> Any:
    kwargs.setdefault("origin", served.origin())
    kwargs.setdefault("open_timeout", 5)
    return connect(live_url(served, query), **kwargs)


async def ring(host: Host, session: Session, title: str = "stretch") -> int:
    seq = host.live.append(session, "note/ring", title).seq
    assert await host.live.flush(session)
    await host.attention.settled()
    return seq


async def test_a_page_hears_alerts_and_counts_of_every_session(host: Host, served: Running) -> None:
    one = (await host.create_session()).session
    two = (await host.create_session()).session
    await ring(host, one, "earlier")
    async with everywhere(served) as ws:
        assert await receive_json(ws) == {"kind": "hello", "unread": {one.id: 1}}
        seq = await ring(host, two, "stretch")
        alert = await receive_json(ws)
        assert alert == {
            "kind": "alert",
            "sessionId": two.id,
            "seq": seq,
            "title": "stretch",
            "body": f"ring {seq}",
            "tag": f"ring-{seq}",
            "at": two.events[seq].time,
        }
        assert await receive_json(ws) == {"kind": "unread", "sessionId": two.id, "count": 1}
        async with httpx.AsyncClient(base_url=served.base, headers=AUTH) as http:
            response = await http.post(f"/api/sessions/{two.id}/read", json={"throughSeq": seq})
            assert response.status_code == 200 and response.json() == {"unread": 0}
        assert await receive_json(ws) == {"kind": "unread", "sessionId": two.id, "count": 0}


async def test_a_page_that_reconnects_gets_what_it_missed_and_nothing_twice(
    host: Host, served: Running
) -> None:
    session = (await host.create_session()).session
    async with everywhere(served) as ws:
        await receive_json(ws)
        await ring(host, session, "first")
        first = await receive_json(ws)
    assert isinstance(host.clock.wall_ms(), int)
    host.clock.advance(1)  # type: ignore[attr-defined]
    missed = await ring(host, session, "while away")
    async with everywhere(served, f"token={TOKEN}&since={first['at']}") as ws:
        assert await receive_json(ws) == {"kind": "hello", "unread": {session.id: 2}}
        replayed = await receive_json(ws)
        assert (replayed["kind"], replayed["seq"], replayed["title"]) == (
            "alert",
            missed,
            "while away",
        )


async def list_news(ws: Any) -> dict[str, Any]:
    """The next frame that is not an unread count (a delete also clears its count)."""
    while (frame := await receive_json(ws))["kind"] == "unread":
        pass
    return frame


async def test_a_page_is_told_when_the_list_changes_here_and_reads_it_again(
    host: Host, served: Running
) -> None:
    async with (
        everywhere(served) as ws,
        httpx.AsyncClient(base_url=served.base, headers=AUTH) as http,
    ):
        assert (await receive_json(ws))["kind"] == "hello"
        created = (await http.post("/api/sessions")).json()["session"]
        assert await list_news(ws) == {"kind": "sessions"}
        assert (await http.post(f"/api/sessions/{created['id']}/fork", json={})).status_code == 201
        assert await list_news(ws) == {"kind": "sessions"}
        assert (await http.delete(f"/api/sessions/{created['id']}")).status_code == 204
        assert await list_news(ws) == {"kind": "sessions"}
        assert (await http.post(f"/api/sessions/{created['id']}/restore")).status_code == 200
        assert await list_news(ws) == {"kind": "sessions"}
        # Not only through the API: a Session the host makes itself (a delegated child).
        parent = host.agent(created["id"]) or (await host.resume(created["id"]))[0]
        await host.sessions.spawn_child(parent)
        assert await list_news(ws) == {"kind": "sessions"}
        # A failed restore changes nothing, and says nothing: the next frame is an alert.
        assert (await http.post(f"/api/sessions/{created['id']}/restore")).status_code == 404
        await ring(host, parent.session, "after")
        assert (await list_news(ws))["kind"] == "alert"


@pytest.mark.parametrize(
    ("query", "origin", "status"),
    [
        ("", "same", 401),
        ("token=wrong", "same", 401),
        (f"token={TOKEN}", "http://evil.example", 403),
        (f"token={TOKEN}&since=yesterday", "same", 422),
        (f"token={TOKEN}&since=-5", "same", 422),
    ],
)
async def test_a_page_without_the_token_origin_or_a_good_since_is_refused(
    served: Running, query: str, origin: str, status: int
) -> None:
    chosen = served.origin() if origin == "same" else origin
    with pytest.raises(InvalidStatus) as refused:
        async with everywhere(served, query, origin=chosen):
            pass
    assert refused.value.response.status_code == status


async def test_pages_are_told_the_app_is_going_away(host: Host, served: Running) -> None:
    async with everywhere(served) as ws:
        await receive_json(ws)
        state = served.server.app.state.web
        assert isinstance(state, WebState) and len(state.pages) == 1
        state.close()
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await receive_json(ws)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001


async def test_the_session_list_counts_unread_alerts(host: Host, client: httpx.AsyncClient) -> None:
    quiet = (await host.create_session()).session
    loud = (await host.create_session()).session
    first = await ring(host, loud, "one")
    await ring(host, loud, "two")
    rows = {row["id"]: row for row in (await client.get("/api/sessions")).json()["sessions"]}
    assert rows[quiet.id]["unread"] == 0 and rows[loud.id]["unread"] == 2
    response = await client.post(f"/api/sessions/{loud.id}/read", json={"throughSeq": first})
    assert response.json() == {"unread": 1}
    rows = {row["id"]: row for row in (await client.get("/api/sessions")).json()["sessions"]}
    assert rows[loud.id]["unread"] == 1


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/api/sessions/ffffffffffffffff/read", {"throughSeq": 1}, 404, "session_not_found"),
        ("/api/sessions/.hidden/read", {"throughSeq": 1}, 404, "invalid_session_id"),
        ("/api/sessions/{id}/read", {"throughSeq": -1}, 422, "invalid_body"),
        ("/api/sessions/{id}/read", {"throughSeq": "3"}, 422, "invalid_body"),
        ("/api/sessions/{id}/read", {}, 422, "invalid_body"),
        ("/api/sessions/{id}/read", {"throughSeq": 1, "more": 1}, 422, "invalid_body"),
    ],
)
async def test_a_bad_read_is_refused_with_a_reason(
    host: Host, client: httpx.AsyncClient, path: str, body: Any, status: int, code: str
) -> None:
    session = (await host.create_session()).session
    response = await client.post(path.replace("{id}", session.id), json=body)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
