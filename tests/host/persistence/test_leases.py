"""`LocalLeases`: one process's leases, which never expire."""

from __future__ import annotations

import pytest

from dsh.persistence.errors import LeaseHeld, LeaseLost, StorageError
from dsh.persistence.leases import Lease, LocalLeases
from dsh.session.errors import InvalidSessionId

pytestmark = pytest.mark.anyio


async def test_each_lease_on_a_session_has_a_larger_epoch_than_the_last() -> None:
    leases = LocalLeases("host-a")
    first = await leases.acquire("s1")
    assert first == Lease("s1", "host-a", 1)
    assert leases.held("s1") == first
    await leases.release(first)
    assert leases.held("s1") is None
    second = await leases.acquire("s1")
    assert second.epoch == 2
    assert (await leases.acquire("s2")).epoch == 1
    assert leases.ttl is None


async def test_a_held_lease_is_not_given_twice() -> None:
    leases = LocalLeases("host-a")
    await leases.acquire("s1")
    with pytest.raises(LeaseHeld, match=r"session s1 is live on host host-a$") as info:
        await leases.acquire("s1")
    assert (info.value.owner, info.value.expires_in) == ("host-a", None)
    with pytest.raises(InvalidSessionId):
        await leases.acquire("../s1")


async def test_renewal_keeps_what_is_held_and_nothing_forgotten() -> None:
    leases = LocalLeases()
    one, two = await leases.acquire("s1"), await leases.acquire("s2")
    stale = Lease("s3", leases.owner, 9)
    assert await leases.renew([one, two, stale]) == {"s1", "s2"}
    leases.forget(two)
    assert await leases.renew([one, two]) == {"s1"}
    await leases.release(two)  # no longer held: nothing happens
    assert leases.held("s1") == one


def test_lease_errors_are_storage_errors_that_name_the_session() -> None:
    held = LeaseHeld("s1", "host-b", 4.25)
    assert isinstance(held, StorageError) and issubclass(LeaseLost, StorageError)
    assert str(held) == "session s1 is live on host host-b for up to 4.2 s more"
    assert "0.0 s" in str(LeaseHeld("s1", "host-b", -3))
