"""Hosts on one PostgreSQL database agree on alerts and unread counts."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dsh.attention.postgres import PostgresAttentionBackend
from dsh.host.host import Host
from dsh.models.absent import AbsentModel
from tests.host.fixtures.plugins import Alerter
from tests.host.host.test_attention import Watcher
from tests.support.deadlines import until

from ..persistence.postgres.test_backend import backend_for

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


def host_on(url: str) -> Host:
    host = Host(backend=backend_for(url), model=AbsentModel())
    host.pm.register(Alerter(), name="alerter")
    return host


@pytest.fixture
async def two(pg_url: str) -> AsyncIterator[tuple[Host, Host]]:
    async with host_on(pg_url) as a, host_on(pg_url) as b:
        yield a, b
    for host in (a, b):
        await host.backend.aclose()


async def listening(host: Host) -> None:
    backend = host.attention.backend
    assert isinstance(backend, PostgresAttentionBackend)
    await until(lambda: backend.listening, "the attention listener")


async def test_an_alert_on_one_host_reaches_the_other_and_a_read_there_clears_both(
    two: tuple[Host, Host],
) -> None:
    a, b = two
    await listening(a)
    await listening(b)
    on_a, on_b = Watcher(), Watcher()
    await a.attention.watch(on_a)
    await b.attention.watch(on_b)
    session = (await a.create_session()).session
    seq = a.live.append(session, "note/ring", "stretch").seq
    assert await a.live.flush(session)
    await until(lambda: ("alert" in on_b.kinds()), "B to hear A's alert")
    assert on_b.alerts() == [(session.id, seq)] and on_a.alerts() == [(session.id, seq)]
    await until(lambda: on_b.frames[-1].get("count") == 1, "B to hear the count")
    assert await b.attention.unread() == {session.id: 1}

    assert await b.attention.read(session.id, seq) == 0
    await until(lambda: on_a.frames[-1] == {
        "kind": "unread", "sessionId": session.id, "count": 0
    }, "A to hear B's read")  # fmt: skip
    assert await a.attention.unread() == {} and await b.attention.unread() == {}
    await a.attention.settled()
    assert on_a.alerts() == [(session.id, seq)]  # its own alert, heard back, not sent twice
