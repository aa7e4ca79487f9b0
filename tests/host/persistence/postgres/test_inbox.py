"""Messages through a host that does not own the Session (`postgres.inbox`, `dsh.relay`)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest

from dsh.host.host import Host
from dsh.host.leases import LeaseSettings
from dsh.persistence.inbox import InboxMessage
from dsh.persistence.postgres import PostgresBackend
from dsh.testing import FakeClock, FakeModel
from dsh.web.app import create_app
from dsh.web.settings import WebSettings
from tests.host.web.conftest import AUTH, TOKEN
from tests.support.deadlines import until

from .test_backend import backend_for

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


async def test_posted_messages_wait_in_order_and_wake_every_listener(
    backend: PostgresBackend, pg_url: str
) -> None:
    inbox = backend.inbox()
    assert backend.inbox() is inbox
    heard: list[str] = []
    other = backend_for(pg_url.replace("schema=t_", "schema=u_"))  # another schema
    other_heard: list[str] = []
    async with anyio.create_task_group() as group:
        group.start_soon(inbox.listen, heard.append)
        group.start_soon(other.inbox().listen, other_heard.append)
        await until(lambda: inbox.listening == other.inbox().listening == 1, "both to listen")
        first = await inbox.post("s1", "hello", "Europe/Paris", "host-b")
        second = await inbox.post("s1", "again", None, "host-c")
        await inbox.post("s2", "elsewhere", None, "host-b")
        await until(lambda: heard == ["s1", "s1", "s2"], "the wake-ups")
        group.cancel_scope.cancel()
    assert other_heard == []
    assert await inbox.pending("s1") == [
        InboxMessage(first, "s1", "hello", "Europe/Paris", "host-b"),
        InboxMessage(second, "s1", "again", None, "host-c"),
    ]
    assert await inbox.waiting(["s1", "s3"]) == {"s1"} and await inbox.waiting([]) == set()
    assert await inbox.orphaned() == ["s1", "s2"]
    lease = await backend.lease_backend("host-a", ttl=30).acquire("s1")
    assert await inbox.orphaned() == ["s2"]  # s1 has an owner: it takes them
    await inbox.remove([first])
    await inbox.remove([])
    assert [message.id for message in await inbox.pending("s1")] == [second]
    assert lease.epoch == 1
    await other.aclose()


async def test_a_listener_whose_connection_dies_listens_again(
    backend: PostgresBackend, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = backend.inbox()
    heard: list[str] = []
    async with anyio.create_task_group() as group:
        group.start_soon(inbox.listen, heard.append)
        await until(lambda: inbox.listening == 1, "the listener")
        async with backend.database.connection() as connection:
            await connection.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE query LIKE 'LISTEN %%' AND pid <> pg_backend_pid()"
            )
        with anyio.fail_after(10):
            while not heard:
                await inbox.post("s1", "after the cut", None, "host-b")
                await anyio.sleep(0.2)
        group.cancel_scope.cancel()
    assert "inbox: listening on" in caplog.text and "stopped" in caplog.text


# -- hosts ------------------------------------------------------------------------------


@asynccontextmanager
async def hosts_on(url: str, clock: FakeClock, count: int) -> AsyncIterator[list[Host]]:
    made = [
        Host(
            backend=backend_for(url),
            model=FakeModel(["from the owner"] * 4),
            clock=clock,
            lease_settings=LeaseSettings(ttl_seconds=30, renew_seconds=3),
        )
        for _ in range(count)
    ]
    try:
        async with made[0], made[1]:
            # The relays start listening in the background; a row posted before its owner
            # listens is found only by the poll, on this fake clock that nobody advances.
            await until(
                lambda: all(host.backend.inbox().listening for host in made),
                "every host's inbox relay to listen",
            )
            yield made
    finally:
        for host in made:
            await host.backend.aclose()


def types(host: Host, session_id: str) -> list[str]:
    agent = host.agent(session_id)
    assert agent is not None
    return [event.type for event in agent.session.events]


async def test_a_message_posted_through_another_host_runs_its_turn_on_the_owner_once(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with hosts_on(pg_url, clock, 2) as (a, b):
        agent = await a.create_session()
        session_id = agent.session.id
        posted = await b.sessions.post_message(session_id, "through B", time_zone="Asia/Tokyo")
        assert posted.agent is None and posted.owner == a.host_id and b.agent(session_id) is None
        summary = await b.catalogue.stored_summary(session_id, live=True)
        assert summary.id == session_id and summary.live
        await until(lambda: "turn/end" in types(a, session_id), "the turn on A")
        messages = list(agent.session.scan(types={"message/user"}))
        assert [event.data["text"] for event in messages] == ["through B"]  # type: ignore[index]
        assert messages[0].data["timeZone"] == "Asia/Tokyo"  # type: ignore[index]
        inbox = a.backend.inbox()
        assert inbox is not None
        await until(lambda: a.coordinator.durable_length(agent.session) == len(agent.session))
        clock.advance(1)  # A's poll: the message is stored, its row goes
        for _ in range(500):
            if not await inbox.pending(session_id):
                break
            await anyio.sleep(0.01)
        assert await inbox.pending(session_id) == []
        stored = await b.backend.read(session_id, types={"message/user"})
        assert [event.data["text"] for event in stored] == ["through B"]  # type: ignore[index]


async def test_a_message_for_a_session_nobody_holds_makes_it_live_on_the_host_posted_to(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with hosts_on(pg_url, clock, 2) as (a, b):
        agent = await a.create_session()
        session_id = agent.session.id
        a.live.append(agent.session, "note/x", {})
        await a.close_session(session_id)
        posted = await b.sessions.post_message(session_id, "to B")
        assert posted.agent is not None and posted.resumed and b.owns(session_id)
        await until(lambda: "turn/end" in types(b, session_id), "the turn on B")


async def test_rows_left_for_a_session_whose_owner_is_gone_are_taken_by_a_survivor(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    clock = FakeClock()
    async with hosts_on(pg_url, clock, 2) as (a, b):
        agent = await a.create_session()
        session_id = agent.session.id
        a.live.append(agent.session, "note/x", {})
        await a.close_session(session_id)
        # Posted while A still owned it, and A closed it before taking the row.
        inbox = b.backend.inbox()
        assert inbox is not None
        await inbox.post(session_id, "left behind", None, "host-x")
        await until(lambda: clock.sleeping >= 2, "the polls to sleep")
        clock.advance(1)
        await until(
            lambda: any(
                host.agent(session_id) is not None and "turn/end" in types(host, session_id)
                for host in (a, b)
            ),
            "a survivor to take it",
        )
        owners = [host for host in (a, b) if host.agent(session_id) is not None]
        assert len(owners) == 1


async def test_post_messages_on_a_non_owner_answers_202_like_a_local_message(
    pg_url: str, tmp_path: Path
) -> None:
    clock = FakeClock()
    async with hosts_on(pg_url, clock, 2) as (a, b):
        agent = await a.create_session()
        session_id = agent.session.id
        settings = WebSettings(token=TOKEN, port=8765, static_dir=tmp_path)
        transport = httpx.ASGITransport(app=create_app(b, settings), raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH
        ) as http:
            response = await http.post(
                f"/api/sessions/{session_id}/messages", json={"text": "via the API on B"}
            )
            assert response.status_code == 202, response.text
            body = response.json()
            assert body["queued"] is True and body["resumed"] is False
            assert body["session"]["id"] == session_id and body["session"]["live"] is True
        await until(lambda: "turn/end" in types(a, session_id), "the turn on A")


async def test_a_message_of_any_character_goes_through_the_inbox_exactly(
    backend: PostgresBackend,
) -> None:
    inbox = backend.inbox()
    hostile = "hi\u0000there \u001b]52;c;aGk=\u0007 \u202e \ud7ff \U0001f600"
    posted = await inbox.post("s1", hostile, None, "host-b")
    async with backend.database.connection() as connection:  # a row an older host posted
        await connection.execute(
            "INSERT INTO inbox (session_id, text, via) VALUES ('s1', 'from before', 'host-c')"
        )
    pending = await inbox.pending("s1")
    first, older = pending
    assert (first.id, first.text) == (posted, hostile) and older.text == "from before"
