"""`LeaseKeeper`: leases renewed on a clock, and a Session given up before it may be taken."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Collection

import anyio
import anyio.lowlevel
import pytest

from dsh.host.leases import LeaseKeeper, LeaseSettings
from dsh.persistence.errors import StorageError
from dsh.persistence.leases import Lease, LeaseBackend, LocalLeases
from dsh.testing import FakeClock

pytestmark = pytest.mark.anyio

TTL = 10.0


class ExpiringLeases(LeaseBackend):
    """Leases with a `ttl`, whose renewals a test scripts: `drop` loses some, `fail` raises,
    `hang` blocks until released."""

    def __init__(self) -> None:
        self.owner = "host-a"
        self.ttl = TTL
        self.local = LocalLeases(self.owner)
        self.renewals: list[set[str]] = []
        self.drop: set[str] = set()
        self.fail = False
        self.hang: anyio.Event | None = None
        self.released: list[str] = []
        self.forgotten: list[str] = []

    async def acquire(self, session_id: str) -> Lease:
        return await self.local.acquire(session_id)

    async def renew(self, leases: Collection[Lease]) -> set[str]:
        if self.hang is not None:
            await self.hang.wait()
        if self.fail:
            raise StorageError("the database went away")
        self.renewals.append({lease.session_id for lease in leases})
        return await self.local.renew(leases) - self.drop

    async def release(self, lease: Lease) -> None:
        self.released.append(lease.session_id)
        await self.local.release(lease)

    def held(self, session_id: str) -> Lease | None:
        return self.local.held(session_id)

    def forget(self, lease: Lease) -> None:
        self.forgotten.append(lease.session_id)
        self.local.forget(lease)


async def settle() -> None:
    for _ in range(30):
        await anyio.lowlevel.checkpoint()


class Running:
    def __init__(self, keeper: LeaseKeeper, backend: ExpiringLeases, clock: FakeClock) -> None:
        self.keeper, self.backend, self.clock = keeper, backend, clock
        self.lost: list[str] = []

    async def acquire(self, session_id: str) -> Lease:
        lease = await self.keeper.acquire(session_id)
        await settle()  # the renewal task is asleep again
        return lease

    async def tick(self, seconds: float) -> None:
        self.clock.advance(seconds)
        await settle()


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    backend, clock = ExpiringLeases(), FakeClock()
    async with anyio.create_task_group() as group:
        lost: list[str] = []

        async def on_lost(session_id: str) -> None:
            lost.append(session_id)

        keeper = LeaseKeeper(
            backend, group, on_lost, clock=clock, settings=LeaseSettings(renew_seconds=3)
        )
        run = Running(keeper, backend, clock)
        run.lost = lost
        yield run
        keeper.close()
        await settle()
        group.cancel_scope.cancel()


async def test_held_leases_are_renewed_together_every_period(running: Running) -> None:
    await running.acquire("s1")
    await running.acquire("s2")
    await running.tick(2.9)
    assert running.backend.renewals == []
    await running.tick(0.1)
    assert running.backend.renewals == [{"s1", "s2"}]
    await running.tick(3)
    assert len(running.backend.renewals) == 2 and running.keeper.renewals == 2
    assert running.lost == []


async def test_a_lease_the_renewal_leaves_out_is_lost_and_given_up_at_once(
    running: Running,
) -> None:
    await running.acquire("s1")
    await running.acquire("s2")
    running.backend.drop = {"s2"}
    await running.tick(3)
    assert running.lost == ["s2"]
    assert running.backend.forgotten == ["s2"]
    assert running.keeper.holds("s1") and not running.keeper.holds("s2")
    await running.tick(3)
    assert running.backend.renewals[-1] == {"s1"}


async def test_failing_renewals_give_a_lease_up_when_its_ttl_since_the_last_success_ran_out(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "dsh.host.leases")
    await running.acquire("s1")
    await running.tick(3)  # renewed at 3: valid until 13
    running.backend.fail = True
    for _ in range(3):
        await running.tick(3)  # 6, 9, 12: failing, still valid
    assert running.lost == []
    await running.tick(1)  # 13
    assert running.lost == ["s1"]
    failures = [record for record in caplog.records if "renewing" in record.message]
    assert len(failures) == 1 and "the database went away" in failures[0].message


async def test_a_renewal_that_hangs_is_abandoned_when_the_lease_runs_out(running: Running) -> None:
    await running.acquire("s1")  # valid until 10
    running.backend.hang = anyio.Event()
    await running.tick(3)
    await running.tick(3)
    await running.tick(3)
    assert running.lost == []
    await running.tick(1)
    assert running.lost == ["s1"]
    running.backend.hang.set()


async def test_a_renewal_that_recovers_keeps_the_lease_and_says_so(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "dsh.host.leases")
    await running.acquire("s1")
    running.backend.fail = True
    await running.tick(3)
    running.backend.fail = False
    await running.tick(3)
    await running.tick(6)
    assert running.lost == [] and running.keeper.holds("s1")
    assert any("renewed again after 1 failed" in record.message for record in caplog.records)


async def test_released_leases_are_ended_and_no_longer_renewed(running: Running) -> None:
    lease = await running.acquire("s1")
    assert running.keeper.lease("s1") == lease
    await running.keeper.release("s1")
    await running.keeper.release("s1")
    assert running.backend.released == ["s1"] and running.keeper.lease("s1") is None
    await running.tick(9)
    assert running.backend.renewals == []
    await running.acquire("s2")  # the renewal task wakes for new leases
    await running.tick(3)
    assert running.backend.renewals == [{"s2"}]


async def test_a_period_that_ends_with_nothing_held_renews_nothing_and_warns_of_nothing(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "dsh.host.leases")
    await running.acquire("s1")
    await running.tick(1)
    await running.keeper.release("s1")  # released while the renewal task sleeps
    await running.tick(5)  # its period ends with nothing held
    assert running.backend.renewals == [] and running.lost == []
    assert [record.message for record in caplog.records] == []


async def test_a_release_that_fails_is_logged_and_the_lease_left_to_expire(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    async def refuse(lease: Lease) -> None:
        raise StorageError("no connection")

    await running.acquire("s1")
    running.backend.release = refuse  # type: ignore[method-assign]
    await running.keeper.release("s1")
    assert not running.keeper.holds("s1")
    assert "(it expires on its own): no connection" in caplog.text


async def test_closing_stops_the_renewals_without_waiting_a_period(running: Running) -> None:
    await running.acquire("s1")
    await settle()
    running.keeper.close()
    await settle()
    assert running.clock.sleeping == 0
    await running.tick(30)
    assert running.backend.renewals == [] and running.lost == []


async def test_leases_that_never_expire_run_no_renewal_task() -> None:
    clock = FakeClock()
    async with anyio.create_task_group() as group:

        async def on_lost(session_id: str) -> None:
            raise AssertionError("unreachable: local leases are never lost")

        keeper = LeaseKeeper(LocalLeases(), group, on_lost, clock=clock)
        await keeper.acquire("s1")
        await settle()
        assert not keeper.expires and keeper.holds("s1") and clock.sleeping == 0
        await keeper.release("s1")


def test_lease_settings_are_positive_and_renew_before_the_ttl_runs_out() -> None:
    assert LeaseSettings() == LeaseSettings(ttl_seconds=10, renew_seconds=3)
    for bad in (0.0, -1.0, float("nan"), float("inf"), 3601.0):
        with pytest.raises(ValueError, match="more than 0 and at most 3600"):
            LeaseSettings(renew_seconds=bad)
        with pytest.raises(ValueError, match="ttl_seconds"):
            LeaseSettings(ttl_seconds=bad)
    with pytest.raises(ValueError, match="renewal every 5 s is not less than the TTL of 5 s"):
        LeaseSettings(ttl_seconds=5, renew_seconds=5)
