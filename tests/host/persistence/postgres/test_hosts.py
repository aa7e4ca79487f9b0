"""Hosts on one PostgreSQL database: one owner per live Session, and a lost lease closes it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import anyio.lowlevel
import pytest

from dsh.host.host import Host
from dsh.host.leases import LeaseSettings
from dsh.models.absent import AbsentModel
from dsh.persistence.postgres import backend as postgres_backend
from dsh.session.errors import FlushRefused, SessionLiveElsewhere
from dsh.testing import FakeClock, settled
from tests.support.deadlines import until

from .test_backend import backend_for

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


def host_on(url: str, clock: FakeClock | None = None) -> Host:
    return Host(
        backend=backend_for(url),
        model=AbsentModel(),
        clock=clock,
        lease_settings=LeaseSettings(renew_seconds=3),
    )


@pytest.fixture
async def two(pg_url: str) -> AsyncIterator[tuple[Host, Host, FakeClock]]:
    clock = FakeClock()
    async with host_on(pg_url, clock) as a, host_on(pg_url) as b:
        yield a, b, clock
    for host in (a, b):
        await host.backend.aclose()


async def test_a_live_session_has_one_owner_and_another_host_takes_it_once_it_closes(
    two: tuple[Host, Host, FakeClock],
) -> None:
    a, b, _ = two
    agent = await a.create_session()
    a.live.append(agent.session, "note/x", {"n": 1})
    assert await a.live.flush(agent.session)
    assert a.owns(agent.session.id) and not b.owns(agent.session.id)
    with pytest.raises(SessionLiveElsewhere, match=f"live on host {a.host_id}") as info:
        await b.resume(agent.session.id)
    assert info.value.status == 409 and info.value.owner == a.host_id
    await a.close_session(agent.session.id)
    taken, resumed = await b.resume(agent.session.id)
    assert resumed and b.owns(taken.session.id)
    # Everything A stored is there, then B's own end-seed marker.
    assert [event.type for event in taken.session.events] == [
        "note/x",
        "session/end-seed",
    ]
    lease = b.leases.held(taken.session.id)
    assert lease is not None and lease.epoch == 2


async def test_a_host_that_loses_a_lease_closes_the_session_and_stores_nothing_more(
    two: tuple[Host, Host, FakeClock],
) -> None:
    a, b, clock = two
    agent = await a.create_session()
    session = agent.session
    async with a.backend.database.connection() as connection:  # type: ignore[attr-defined]
        # The lease runs out while A is not looking (a stalled host), and B takes over.
        await connection.execute(
            "UPDATE leases SET expires_at = clock_timestamp() - interval '1 second'"
        )
    taken, _ = await b.resume(session.id)
    a.live.append(session, "note/late", {"n": 2})
    with pytest.raises(Exception, match=r"no longer valid|holds no lease"):
        await a.live.flush(session)
    clock.advance(3)  # A's next renewal finds the lease gone
    with anyio.fail_after(10):
        while a.live.is_live(session):
            await anyio.lowlevel.checkpoint()
    assert not a.owns(session.id) and not a.live.is_live(session)
    stored = await b.backend.read(session.id)
    assert "note/late" not in [event.type for event in stored]
    assert b.owns(taken.session.id)


async def test_a_session_created_on_one_host_is_listed_and_readable_on_another(
    two: tuple[Host, Host, FakeClock],
) -> None:
    a, b, _ = two
    agent = await a.create_session()
    a.live.append(agent.session, "session/title", {"title": "Shared"})
    assert await a.live.flush(agent.session)
    listed = {row.id: row for row in await b.catalogue.list()}
    assert listed[agent.session.id].title == "Shared"
    header, length = await b.catalogue.header(agent.session.id)
    assert header.identity_equals(agent.session.header) and length == len(agent.session)


async def test_a_cold_write_takes_the_lease_so_another_hosts_live_session_is_left_alone(
    two: tuple[Host, Host, FakeClock],
) -> None:
    a, b, _ = two
    agent = await a.create_session()
    session_id = agent.session.id
    with pytest.raises(SessionLiveElsewhere):
        await b.sessions.set_title(session_id, "From B")
    with pytest.raises(SessionLiveElsewhere):
        await b.sessions.delete(session_id)
    assert [row.id for row in await b.catalogue.list()] == [session_id]
    a.live.append(agent.session, "note/x", {})  # so that closing does not trash it as empty
    await a.close_session(session_id)
    summary = await b.sessions.set_title(session_id, "From B")
    assert summary.title == "From B" and not b.owns(session_id)
    await b.sessions.delete(session_id)
    assert await a.catalogue.list() == []


async def test_a_nul_in_a_message_or_title_is_stored_and_never_stalls_the_session(
    two: tuple[Host, Host, FakeClock],
) -> None:
    a, _, _ = two
    agent = await a.create_session()
    session = agent.session
    await a.sessions.post_message(session.id, "hi\u0000there")
    await settled(agent)  # the message is queued, then stored by its turn
    a.live.append(session, "session/title", {"title": "a\u0000b"})
    a.live.append(session, "note/after", {"n": 1})
    assert await a.live.flush(session)
    assert a.catalogue.health().ok
    stored = await a.backend.inspect(session.id)
    assert stored is not None
    assert {"message/user", "session/title", "note/after"} <= {e.type for e in stored.events}
    assert stored.events[0].data["text"] == "hi\u0000there"  # type: ignore[index,call-overload]
    # The live list shows the Session's own text; the stored row (what other hosts and a
    # cold list read) holds U+FFFD where PostgreSQL's `text` refuses NUL.
    summary = await a.backend.summary(session.id)
    assert summary is not None
    assert (summary.title, summary.preview) == ("a\ufffdb", "hi\ufffdthere")


async def test_a_write_storage_refuses_fails_its_request_and_the_session_goes_on(
    two: tuple[Host, Host, FakeClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The class behind the NUL: with the derived columns unguarded again, PostgreSQL
    refuses the title for good. That one request fails with `storage_refused`, what
    came before is stored, the Session is closed rather than stalled, the host stays
    healthy, and the Session goes on from its stored log."""
    a, _, _ = two
    monkeypatch.setattr(postgres_backend, "shown", lambda text: text)
    agent = await a.create_session()
    session = agent.session
    a.live.append(session, "note/before", {"n": 1})
    assert await a.live.flush(session)
    with pytest.raises(FlushRefused, match="cannot contain NUL") as refused:
        await a.sessions.set_title(session.id, "a\u0000b")
    assert (refused.value.code, refused.value.status) == ("storage_refused", 500)
    await until(lambda: a.live.find(session.id) is None, "the refused Session closed")
    assert a.catalogue.health().ok
    await a.sessions.post_message(session.id, "still here")
    resumed = a.agent(session.id)
    assert resumed is not None
    await settled(resumed)  # the message is stored by its turn
    assert await a.live.flush(resumed.session)
    stored = await a.backend.inspect(session.id)
    assert stored is not None
    types = [event.type for event in stored.events]
    assert "note/before" in types and "message/user" in types
    assert "session/title" not in types  # refused, never acknowledged
