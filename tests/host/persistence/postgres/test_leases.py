"""Leases in PostgreSQL: epochs, expiry on the database's clock, and fenced writes."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from dsh.persistence.errors import IntegrityError, LeaseHeld, LeaseLost
from dsh.persistence.leases import Lease
from dsh.persistence.postgres import PostgresBackend, PostgresLeases
from dsh.session.errors import InvalidSessionId

from ..contract import events, header
from .test_backend import backend_for

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


class Hosts:
    """Two hosts' backends on one database, with each one's leases."""

    def __init__(self, url: str) -> None:
        self.a, self.b = backend_for(url), backend_for(url)
        self.leases_a = self.a.lease_backend("host-a")
        self.leases_b = self.b.lease_backend("host-b")

    async def expire(self, session_id: str) -> None:
        """Let the lease's time run out (as if its TTL passed without a renewal)."""
        async with self.a.database.connection() as connection:
            await connection.execute(
                "UPDATE leases SET expires_at = clock_timestamp() - interval '1 second'"
                " WHERE session_id = %s",
                (session_id,),
            )


@pytest.fixture
async def hosts(pg_url: str) -> AsyncIterator[Hosts]:
    both = Hosts(pg_url)
    yield both
    await both.a.aclose()
    await both.b.aclose()


async def test_a_lease_is_held_by_one_host_until_it_expires_then_taken_with_a_larger_epoch(
    hosts: Hosts,
) -> None:
    first = await hosts.leases_a.acquire("s1")
    assert first == Lease("s1", "host-a", 1)
    assert hosts.leases_a.held("s1") == first and hosts.leases_a.ttl == 10.0
    with pytest.raises(LeaseHeld, match="live on host host-a for up to") as info:
        await hosts.leases_b.acquire("s1")
    assert info.value.expires_in is not None and 9 < info.value.expires_in <= 10
    with pytest.raises(LeaseHeld):
        await hosts.leases_a.acquire("s1")  # this host holds it already
    await hosts.expire("s1")
    second = await hosts.leases_b.acquire("s1")
    assert second == Lease("s1", "host-b", 2)
    assert await hosts.leases_a.renew([first]) == set()  # lost for good
    assert hosts.leases_a.held("s1") is None


async def test_renewal_extends_only_valid_leases_of_this_host(hosts: Hosts) -> None:
    one, two = await hosts.leases_a.acquire("s1"), await hosts.leases_a.acquire("s2")
    await hosts.expire("s2")
    assert await hosts.leases_a.renew([one, two]) == {"s1"}
    assert await hosts.leases_b.renew([one]) == set()  # not this host's
    assert await hosts.leases_a.renew([]) == set()


async def test_a_released_lease_can_be_taken_at_once(hosts: Hosts) -> None:
    lease = await hosts.leases_a.acquire("s1")
    await hosts.leases_a.release(lease)
    await hosts.leases_a.release(lease)  # no longer held: nothing
    assert (await hosts.leases_b.acquire("s1")).epoch == 2
    with pytest.raises(InvalidSessionId):
        await hosts.leases_b.acquire("no/such")
    with pytest.raises(ValueError, match="at most 3600"):
        PostgresLeases(hosts.a.database, "x", ttl=0)


async def test_every_write_checks_the_writers_epoch_in_its_own_transaction(hosts: Hosts) -> None:
    await hosts.leases_a.acquire("s1")
    await hosts.a.initialize(header(), events(0, 2))
    await hosts.a.append("s1", events(2, 3))
    with pytest.raises(LeaseLost, match="holds no lease"):
        await hosts.b.append("s1", events(3, 4))  # fenced, and holding nothing
    await hosts.expire("s1")
    with pytest.raises(LeaseLost, match=r"host-a .epoch 1. is no longer valid"):
        await hosts.a.append("s1", events(3, 4))
    await hosts.leases_b.acquire("s1")
    with pytest.raises(LeaseLost):
        await hosts.a.append("s1", events(3, 4))  # still refused, now that B owns it
    await hosts.b.append("s1", events(3, 5))
    assert await hosts.a.read("s1") == events(0, 5)
    with pytest.raises(IntegrityError):
        await hosts.b.append("s1", events(4, 5))


async def test_a_creation_is_fenced_too(hosts: Hosts) -> None:
    await hosts.leases_b.acquire("s1")
    with pytest.raises(LeaseLost):
        await hosts.a.initialize(header(), events(0, 1))
    assert await hosts.a.cursor("s1") is None


async def test_a_writer_without_leases_may_write_only_what_no_host_holds(
    hosts: Hosts, pg_url: str
) -> None:
    plain = backend_for(pg_url)  # a command or a test: it never took leases
    try:
        await plain.initialize(header(), events(0, 1))
        await hosts.leases_a.acquire("s1")
        with pytest.raises(LeaseHeld, match="live on host host-a"):
            await plain.append("s1", events(1, 2))
        await hosts.expire("s1")
        await plain.append("s1", events(1, 2))
        assert await plain.cursor("s1") == 2
    finally:
        await plain.aclose()


async def test_a_takeover_waits_for_a_write_in_flight_and_then_sees_it(hosts: Hosts) -> None:
    lease = await hosts.leases_a.acquire("s1")
    await hosts.a.initialize(header(), events(0, 1))
    taken: list[Lease] = []
    async with (
        anyio.create_task_group() as group,
        hosts.a.database.connection() as writer,
        writer.transaction(),
    ):
        # A write in flight holds the lease row FOR SHARE until it commits (when this
        # block ends, before the task group waits for the takeover).
        await writer.execute(
            "SELECT dsh_append('s1', 1, %s, %s, false, NULL, NULL, %s, %s)",
            (["message/user"], [events(1, 2)[0].to_json()], lease.owner, lease.epoch),
        )
        group.start_soon(expire_and_take, hosts, taken)
        await wait_for_lock_waiter(hosts)
        assert taken == []  # blocked behind the write
    assert [item.owner for item in taken] == ["host-b"]
    assert await hosts.b.read("s1") == events(0, 2)


async def expire_and_take(hosts: Hosts, taken: list[Lease]) -> None:
    async with hosts.b.database.connection() as connection:
        await connection.execute(
            "UPDATE leases SET expires_at = clock_timestamp() - interval '1 second'"
            " WHERE session_id = 's1'"
        )
    taken.append(await hosts.leases_b.acquire("s1"))


async def wait_for_lock_waiter(hosts: Hosts) -> None:
    with anyio.fail_after(10):
        while True:
            async with hosts.a.database.connection() as connection:
                cursor = await connection.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                )
                row = await cursor.fetchone()
            if row is not None and row[0] > 0:
                return
            await anyio.sleep(0.01)


async def test_a_backend_keeps_one_lease_store_per_owner(hosts: Hosts) -> None:
    assert hosts.a.lease_backend("host-a") is hosts.leases_a
    assert hosts.a.lease_backend("host-c") is not hosts.leases_a
    assert isinstance(hosts.a, PostgresBackend)


async def test_a_renewal_waits_for_a_round_of_appends_in_flight_and_never_deadlocks(
    hosts: Hosts,
) -> None:
    """A round of appends fences its Sessions' lease rows in Session-id order and holds
    them until it commits; the renewal of the same host's leases locks them in that
    order too, so it waits holding none rather than holding the round's next one."""
    ids = [f"s{number:03d}" for number in range(200)]
    leases = {}
    for session_id in reversed(ids):  # the rows lie in the table in reverse id order
        leases[session_id] = await hosts.leases_a.acquire(session_id)
    renewed: list[set[str]] = []

    async def renew() -> None:
        renewed.append(await hosts.leases_a.renew(list(leases.values())))

    async with (
        hosts.a.database.connection() as round_,
        anyio.create_task_group() as group,
        round_.transaction(),
    ):
        await round_.execute("SET LOCAL lock_timeout = '5s'")
        fence = "SELECT dsh_fence(%s, 'host-a', %s)"
        await round_.execute(fence, (ids[0], leases[ids[0]].epoch))
        group.start_soon(renew)
        await wait_for_lock_waiter(hosts)
        await round_.execute(fence, (ids[-1], leases[ids[-1]].epoch))  # not held
        assert renewed == []  # the renewal waits for the round to commit
    assert renewed == [set(ids)]
