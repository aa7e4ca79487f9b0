"""The wake index shared by the hosts on one database (`dsh.wake.postgres`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from dsh.host.host import Host
from dsh.host.leases import LeaseSettings
from dsh.persistence.backends import choose_backend
from dsh.persistence.postgres import PostgresBackend
from dsh.testing import FakeClock, FakeModel
from dsh.wake import WakeEntry
from dsh.wake.backends import wake_backend_for
from dsh.wake.errors import WakeBackendError
from dsh.wake.postgres import PostgresWakeBackend
from tests.host.persistence.postgres.test_backend import backend_for
from tests.host.wake.alarm_plugin import RANG, AlarmPlugin, rung, set_alarm
from tests.support.deadlines import until

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


async def expire_leases(backend: PostgresBackend, session_id: str) -> None:
    """The owner stops renewing (it died, or stalled): its lease runs out now."""
    async with backend.database.connection() as connection:
        await connection.execute(
            "UPDATE leases SET expires_at = clock_timestamp() - interval '1 second'"
            " WHERE session_id = %s",
            (session_id,),
        )


async def rows(backend: PostgresBackend) -> dict[str, tuple[int | None, bool, str | None]]:
    async with backend.database.connection() as connection:
        cursor = await connection.execute("SELECT session_id, wake_at, dirty, claimed_by FROM wake")
        return {sid: (at, dirty, by) for sid, at, dirty, by in await cursor.fetchall()}


# -- the store on its own ---------------------------------------------------------------


@pytest.fixture
async def backends(pg_url: str) -> AsyncIterator[tuple[PostgresBackend, PostgresBackend]]:
    a, b = backend_for(pg_url), backend_for(pg_url)
    a.lease_backend("host-a", ttl=30)
    b.lease_backend("host-b", ttl=30)
    yield a, b
    await a.aclose()
    await b.aclose()


async def test_entries_are_written_read_back_and_removed_later_ones_winning(
    backends: tuple[PostgresBackend, PostgresBackend],
) -> None:
    wake = PostgresWakeBackend(backends[0])
    await wake.write([("s1", WakeEntry(5)), ("s2", WakeEntry(None, True)), ("s1", WakeEntry(7))])
    assert (await wake.load()).entries == {"s1": WakeEntry(7), "s2": WakeEntry(None, True)}
    await wake.write([("s2", WakeEntry())])
    assert (await wake.load()).entries == {"s1": WakeEntry(7)}
    await wake.replace({"s3": WakeEntry(1), "s4": WakeEntry()})
    assert (await wake.load()).entries == {"s3": WakeEntry(1)}
    await wake.write([])
    assert wake.shared and wake.sweep_seconds == 1.0
    assert wake.description == f"the wake index in {backends[0].describe()}"


async def test_only_the_lease_holder_writes_an_entry_while_it_holds_the_session(
    backends: tuple[PostgresBackend, PostgresBackend],
) -> None:
    a, b = backends
    lease = await a.leases.acquire("s1")  # type: ignore[union-attr]
    await PostgresWakeBackend(a).write([("s1", WakeEntry(None, True))])
    # B lost the Session to A (say): its clean entry must not hide A's dirty mark.
    await PostgresWakeBackend(b).write([("s1", WakeEntry(9)), ("s2", WakeEntry(3))])
    assert await rows(a) == {"s1": (None, True, None), "s2": (3, False, None)}
    await a.leases.release(lease)  # type: ignore[union-attr]
    await PostgresWakeBackend(b).write([("s1", WakeEntry(9))])
    assert (await rows(a))["s1"] == (9, False, None)


async def test_exactly_one_of_many_claims_wins_and_a_write_clears_the_claim(
    backends: tuple[PostgresBackend, PostgresBackend],
) -> None:
    a, b = backends
    stores = [PostgresWakeBackend(a), PostgresWakeBackend(b)] * 4
    await stores[0].write([("s1", WakeEntry(5))])
    won: list[int] = []

    async def claim(number: int) -> None:
        if await stores[number].claim("s1"):
            won.append(number)

    async with anyio.create_task_group() as group:
        for number in range(len(stores)):
            group.start_soon(claim, number)
    assert len(won) == 1
    owner = "host-a" if won[0] % 2 == 0 else "host-b"
    assert (await rows(a))["s1"] == (5, False, owner)
    assert not await stores[0].claim("s1") and not await stores[1].claim("s1")
    assert not await stores[0].claim("absent")
    await stores[0].write([("s1", WakeEntry(6))])  # a new entry is a new fact
    assert await stores[1].claim("s1")


async def test_a_session_held_by_a_host_is_neither_claimed_nor_swept(
    backends: tuple[PostgresBackend, PostgresBackend],
) -> None:
    a, b = backends
    lease = await a.leases.acquire("s1")  # type: ignore[union-attr]
    await PostgresWakeBackend(a).write([("s1", WakeEntry(5, True))])
    await PostgresWakeBackend(b).write([("s2", WakeEntry(50)), ("s3", WakeEntry(None, True))])
    wake = PostgresWakeBackend(b)
    assert not await wake.claim("s1")
    # Due by 10: nothing of s2 yet; s3 is dirty and nobody holds it (a dead host's).
    assert await wake.due(10) == [("s3", WakeEntry(None, True))]
    assert await wake.due(50) == [("s3", WakeEntry(None, True)), ("s2", WakeEntry(50))]
    await expire_leases(a, "s1")
    assert ("s1", WakeEntry(5, True)) in await wake.due(0)
    assert await wake.claim("s1")
    assert ("s1", WakeEntry(5, True)) not in await wake.due(100)  # claimed: not handed out
    assert lease.epoch == 1


async def test_a_shared_index_cannot_be_discarded_and_failures_name_it(
    backends: tuple[PostgresBackend, PostgresBackend], tmp_path: Path
) -> None:
    wake = PostgresWakeBackend(backends[0])
    with pytest.raises(WakeBackendError, match="shared by every host"):
        await wake.discard()
    dead = PostgresWakeBackend(
        backend_for(f"postgresql://nobody@/dsh?host={tmp_path}&connect_timeout=1"),
        owns_backend=True,
    )
    for attempt in (
        dead.write([("s1", WakeEntry(1))]),
        dead.replace({}),
        dead.claim("s1"),
        dead.due(0),
    ):
        with pytest.raises(WakeBackendError, match=r"cannot \w+.* the wake index in postgresql://"):
            await attempt
    await dead.aclose()


async def test_the_postgresql_store_kind_has_a_wake_store_on_the_hosts_connections(
    pg_url: str,
) -> None:
    choice = choose_backend(pg_url, Path("/nonexistent"), environ={})
    backend = choice.open()
    assert isinstance(backend, PostgresBackend)
    shared = wake_backend_for(choice, backend)
    assert isinstance(shared, PostgresWakeBackend) and shared.database is backend.database
    own = wake_backend_for(choice)
    assert isinstance(own, PostgresWakeBackend) and own.database is not backend.database
    await own.write([("s1", WakeEntry(1))])  # opens (and migrates) its own pool
    await own.aclose()
    await shared.aclose()  # leaves the Host's pool alone
    assert (await shared.load()).entries == {"s1": WakeEntry(1)}
    await backend.aclose()


# -- hosts on one database --------------------------------------------------------------


@asynccontextmanager
async def alarm_hosts(url: str, clock: FakeClock, count: int = 2) -> AsyncIterator[list[Host]]:
    hosts: list[Host] = []
    for _ in range(count):
        backend = backend_for(url)
        # These tests drive minutes of fake time through real queries; the action
        # relay's polls (tested in test_remote_actions) would only add to them.
        backend.remote_actions = lambda: None  # type: ignore[method-assign,assignment,return-value]
        host = Host(
            backend=backend,
            model=FakeModel(),
            clock=clock,
            cwd="/dsh-test",
            lease_settings=LeaseSettings(ttl_seconds=30, renew_seconds=3),
            wake_backend=PostgresWakeBackend(backend),
        )
        host.pm.register(AlarmPlugin(), name="alarm")
        hosts.append(host)
    try:
        async with hosts[0]:
            if count == 1:
                yield hosts
            else:
                async with hosts[1]:
                    yield hosts
    finally:
        for host in hosts:
            await host.backend.aclose()


def live_on(hosts: list[Host], session_id: str) -> list[int]:
    return [number for number, host in enumerate(hosts) if host.agent(session_id) is not None]


async def stored_rang(host: Host, session_id: str) -> list[int]:
    return [event.data["at"] for event in await host.backend.read(session_id, types={RANG})]  # type: ignore[index]


async def test_a_due_session_is_woken_by_exactly_one_host_even_one_that_started_before_it(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with alarm_hosts(pg_url, clock) as hosts:
        a, b = hosts
        agent = await a.create_session()
        at = clock.wall_ms() + 60_000
        set_alarm(agent, at)
        assert await a.live.flush(agent.session)
        session_id = agent.session.id
        await a.close_session(session_id)
        assert await rows(a.backend) == {session_id: (at, False, None)}  # type: ignore[arg-type]
        assert b.lifecycle.index is not None and b.lifecycle.index.entry(session_id) is None
        clock.advance(58)  # within the lead: A's timer and B's sweep both find it due
        await until(lambda: live_on(hosts, session_id), "one host to wake the Session")
        woken = live_on(hosts, session_id)
        clock.advance(2)
        winner = hosts[woken[0]]
        await until(lambda: rung(winner.agent(session_id).session) == [at])  # type: ignore[union-attr]
        clock.advance(5)  # more sweeps: nobody else wakes it
        for _ in range(20):
            await anyio.sleep(0.01)
        assert live_on(hosts, session_id) == woken and len(woken) == 1
        assert await stored_rang(a, session_id) == [at]


async def test_a_dead_hosts_due_reminder_is_delivered_once_by_a_survivor(pg_url: str) -> None:
    clock = FakeClock()
    async with alarm_hosts(pg_url, clock) as hosts:
        a, b = hosts
        agent = await a.create_session()
        at = clock.wall_ms() + 60_000
        set_alarm(agent, at)  # set while live: only A's memory and the log know it
        assert await a.live.flush(agent.session)
        session_id = agent.session.id
        assert (await rows(a.backend))[session_id][1] is True  # type: ignore[arg-type]
        clock.advance(5)
        for _ in range(20):
            await anyio.sleep(0.01)
        assert live_on(hosts, session_id) == [0]  # B's sweeps leave A's live Session alone
        await expire_leases(a.backend, session_id)  # type: ignore[arg-type]  # A is gone
        clock.advance(1)
        await until(lambda: b.agent(session_id) is not None, "B to take the Session over")
        keeper = b._keeper
        assert keeper is not None
        # The time comes, a second at a time: a jump past the lease TTL while a renewal
        # is on its way would make B give the Session up too (no real clock jumps so).
        # Each step waits until every task the last one woke has run and B's keeper is
        # asleep again — its renewal landed (a woken keeper still holds its old scope).
        for _ in range(54):
            await until(
                lambda: clock.waking == 0 and keeper._sleeping is not None, "B's renewal to land"
            )
            clock.advance(1)
        # Both owners tried; only B's write is accepted (B may have hibernated it since).
        await until(lambda: a.agent(session_id) is None, "A to give the Session up")
        for _ in range(500):  # a deadline poll: B's barrier may still be on its way
            if await stored_rang(b, session_id) == [at]:
                break
            await anyio.sleep(0.01)
        assert await stored_rang(b, session_id) == [at]


async def test_a_host_learns_through_its_sweep_what_another_host_left_due(pg_url: str) -> None:
    clock = FakeClock()
    async with alarm_hosts(pg_url, clock, count=1) as (b,):
        async with alarm_hosts(pg_url, clock, count=1) as (a,):
            agent = await a.create_session()
            at = clock.wall_ms() + 30_000
            set_alarm(agent, at)
            assert await a.live.flush(agent.session)
            session_id = agent.session.id
        # A stopped cleanly: its Session is cold, with its entry stored.
        assert await rows(b.backend) == {session_id: (at, False, None)}  # type: ignore[arg-type]
        assert b.lifecycle.index is not None and b.lifecycle.index.entry(session_id) is None
        clock.advance(28)  # B's next sweep finds it, due within the lead
        await until(lambda: b.agent(session_id) is not None, "B to wake the Session")
        assert b.lifecycle.index.entry(session_id) == WakeEntry(at, dirty=True)
        clock.advance(2)
        await until(lambda: rung(b.agent(session_id).session) == [at])  # type: ignore[union-attr]
        await b.close_session(session_id)
        assert await rows(b.backend) == {}  # type: ignore[arg-type]  # nothing left to wake
