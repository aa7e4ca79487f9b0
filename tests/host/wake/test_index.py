"""The wake index against a stand-in host: its crash rules, rebuilds, wakes and failures."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from dsh.persistence.errors import SessionNotFound, StorageError
from dsh.testing import FakeClock
from dsh.wake import MemoryWakeBackend, WakeEntry, WakeIndex
from dsh.wake.ahead import WakeAhead
from dsh.wake.backend import LoadedIndex
from dsh.wake.errors import WakeBackendError, WakeIndexUnavailable
from tests.support.deadlines import until

pytestmark = pytest.mark.anyio


class StandIn:
    """The Host as the index sees it: stored logs' wake times, and who is live."""

    def __init__(self, clock: FakeClock, stored: dict[str, int | None] | None = None) -> None:
        self.clock = clock
        self.stored: dict[str, int | None] = dict(stored or {})
        self.live: set[str] = set()
        self.resumed: list[str] = []
        self.derived: list[str] = []
        self.broken: set[str] = set()
        self.index: WakeIndex | None = None
        self.list_fails = False
        self.gate: anyio.Event | None = None

    def is_live(self, session_id: str) -> bool:
        return session_id in self.live

    async def resume(self, session_id: str) -> None:
        if session_id in self.broken:
            raise StorageError(f"cannot read session {session_id}")
        if session_id not in self.stored:
            raise SessionNotFound(session_id)
        assert self.index is not None
        await self.index.going_live(session_id)
        self.live.add(session_id)
        self.resumed.append(session_id)

    async def derive(self, session_id: str) -> int | None:
        if self.gate is not None:
            await self.gate.wait()
        self.derived.append(session_id)
        if session_id in self.broken:
            raise StorageError(f"cannot read session {session_id}")
        if session_id not in self.stored:
            raise SessionNotFound(session_id)
        return self.stored[session_id]

    async def stored_ids(self) -> list[str]:
        if self.list_fails:
            raise StorageError("cannot list the sessions folder")
        return sorted(self.stored)

    async def close(self, session_id: str) -> None:
        """What `Host.close_session` does for the index."""
        assert self.index is not None
        self.live.discard(session_id)
        await self.index.gone_cold(session_id, self.stored[session_id], known=True)


@asynccontextmanager
async def running(
    wake: MemoryWakeBackend, host: StandIn, **options: float | WakeAhead
) -> AsyncIterator[WakeIndex]:
    options.setdefault("lead_seconds", 0)  # most tests wake at the time itself
    index = WakeIndex(wake, host, clock=host.clock, workers=2, **options)
    host.index = index
    async with anyio.create_task_group() as group:
        await index.start(group)
        try:
            yield index
        finally:
            with anyio.CancelScope(shield=True):
                await index.aclose()
            group.cancel_scope.cancel()


def now(clock: FakeClock, seconds: float = 0) -> int:
    return clock.wall_ms() + round(seconds * 1000)


async def test_start_up_reads_the_index_and_wakes_each_session_at_its_time() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"a": WakeEntry(now(clock, 10)), "b": WakeEntry(now(clock, 20))})
    host = StandIn(clock, {"a": now(clock, 10), "b": now(clock, 20)})
    async with running(wake, host) as index:
        assert index.rebuilt is False and index.ready.is_set()
        assert host.derived == []  # no log was read
        assert index.armed == 2
        clock.advance(10)
        await until(lambda: host.resumed == ["a"])
        clock.advance(10)
        await until(lambda: host.resumed == ["a", "b"])
        assert index.woken == 2
        # A woken Session's stored entry was already past due: nothing was written.
        assert wake.writes == []


async def test_a_missing_index_is_rebuilt_from_every_log_and_stored_whole() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend()
    host = StandIn(clock, {"a": now(clock, 5), "b": None, "c": now(clock, 1)})
    async with running(wake, host) as index:
        assert index.rebuilt is True
        await until(index.ready.is_set)
        assert sorted(host.derived) == ["a", "b", "c"]
        assert wake.entries == {"a": WakeEntry(now(clock, 5)), "c": WakeEntry(now(clock, 1))}
        clock.advance(1)
        await until(lambda: host.resumed == ["c"])


async def test_a_crash_while_live_leaves_a_dirty_mark_that_start_up_derives_again() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"a": WakeEntry(now(clock, 600))})
    host = StandIn(clock, {"a": now(clock, 600)})
    async with running(wake, host) as index:
        await index.going_live("a")
        assert wake.entries == {"a": WakeEntry(now(clock, 600), dirty=True)}
        assert index.armed_at("a") is None
        # ...a reminder is created while it is live; then the process dies (no close).
        host.stored["a"] = now(clock, 5)
    host2 = StandIn(clock, host.stored)
    wake.entries = {"a": WakeEntry(now(clock, 600), dirty=True)}  # what the crash left
    async with running(wake, host2) as index:
        await until(index.ready.is_set)
        assert host2.derived == ["a"]
        assert wake.entries == {"a": WakeEntry(now(clock, 5))}
        clock.advance(5)
        await until(lambda: host2.resumed == ["a"])


async def test_going_live_with_a_past_due_entry_needs_no_write() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"a": WakeEntry(now(clock, -1)), "b": WakeEntry(None, True)})
    host = StandIn(clock, {"a": now(clock, -1), "b": None})
    host.live.add("a")  # made live by a person before the timer got to it
    async with running(wake, host) as index:
        await until(index.ready.is_set)
        await index.going_live("a")
        await index.going_live("b")  # dirty already (and derived again: b has nothing)
        assert all(change[0] != "a" for batch in wake.writes for change in batch)


async def test_going_cold_records_the_answer_and_arms_it() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({})
    host = StandIn(clock, {"a": None})
    async with running(wake, host) as index:
        await index.going_live("a")
        host.live.add("a")
        host.stored["a"] = now(clock, 30)
        await host.close("a")
        assert wake.entries == {"a": WakeEntry(now(clock, 30))}
        assert index.armed_at("a") == now(clock, 30)
        host.stored["a"] = None
        await index.going_live("a")
        await host.close("a")
        assert wake.entries == {}
        assert index.entry("a") is None and index.armed == 0


async def test_a_close_whose_wake_time_is_unknown_stays_dirty_with_the_old_time_armed() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"a": WakeEntry(now(clock, 30))})
    host = StandIn(clock, {"a": now(clock, 30)})
    async with running(wake, host) as index:
        await index.going_live("a")
        await index.gone_cold("a", None, known=False)
        assert wake.entries == {"a": WakeEntry(now(clock, 30), dirty=True)}
        assert index.armed_at("a") == now(clock, 30)


async def test_a_session_no_longer_stored_leaves_the_index_when_it_comes_up() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"gone": WakeEntry(now(clock, 1))})
    host = StandIn(clock, {})
    async with running(wake, host) as index:
        clock.advance(1)
        await until(lambda: wake.entries == {})
        assert index.entry("gone") is None and host.resumed == []


async def test_a_session_that_cannot_be_woken_is_tried_again_later_and_later() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"a": WakeEntry(now(clock, 1))})
    host = StandIn(clock, {"a": now(clock, 1)})
    host.broken.add("a")
    async with running(wake, host, retry_first=2, retry_max=5) as index:
        start = now(clock)
        assert index.overdue() == 0
        clock.advance(1)
        await until(lambda: index.armed_at("a") == start + 1_000 + 2_000)
        assert index.overdue() == 1  # its time passed and it is not live: what /metrics shows
        clock.advance(2)
        await until(lambda: index.armed_at("a") == start + 3_000 + 4_000)
        clock.advance(4)
        await until(lambda: index.armed_at("a") == start + 7_000 + 5_000)  # capped
        host.broken.clear()
        clock.advance(5)
        await until(lambda: host.resumed == ["a"])
        assert index.overdue() == 0
        assert wake.entries == {"a": WakeEntry(start + 1_000)}  # never the authority to drop it


async def test_a_live_session_is_never_woken_and_a_changed_entry_wakes_nothing() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"a": WakeEntry(now(clock, 1)), "b": WakeEntry(now(clock, 1))})
    host = StandIn(clock, {"a": now(clock, 1), "b": now(clock, 1)})
    async with running(wake, host) as index:
        host.live.add("a")  # made live by hand a moment before (not yet told to the index)
        index._entries.pop("b")  # its entry went away after it was armed
        clock.advance(1)
        await until(lambda: index.armed == 0 and not index._due_ids)
        assert host.resumed == []


async def test_another_host_that_claims_a_session_first_wakes_it() -> None:
    class Claimed(MemoryWakeBackend):
        async def claim(self, session_id: str) -> bool:
            return False

    clock = FakeClock()
    wake = Claimed({"a": WakeEntry(now(clock, 1))})
    host = StandIn(clock, {"a": now(clock, 1)})
    async with running(wake, host) as index:
        clock.advance(1)
        await until(lambda: index.armed == 0 and not index._due_ids)
        assert host.resumed == []


async def test_a_claim_the_store_cannot_answer_is_tried_again_like_a_failed_wake(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Away(MemoryWakeBackend):
        away = True

        async def claim(self, session_id: str) -> bool:
            if self.away:
                raise WakeBackendError("the shared index cannot be reached")
            return True

    clock = FakeClock()
    wake = Away({"a": WakeEntry(now(clock, 1))})
    host = StandIn(clock, {"a": now(clock, 1)})
    async with running(wake, host, retry_first=2, retry_max=5) as index:
        start = now(clock)
        clock.advance(1)
        await until(lambda: index.armed_at("a") == start + 1_000 + 2_000)
        assert "could not wake session a (WakeBackendError" in caplog.text
        wake.away = False
        clock.advance(2)
        await until(lambda: host.resumed == ["a"])


async def test_a_failed_write_discards_the_stored_copy_and_the_next_write_is_a_snapshot() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"a": WakeEntry(now(clock, 9))})
    host = StandIn(clock, {"a": now(clock, 9), "b": None})
    async with running(wake, host) as index:
        wake.fail_writes = True
        await index.going_live("b")  # the write fails, the copy is removed: safe to go on
        assert wake.entries is None
        wake.fail_writes = False
        await index.gone_cold("b", now(clock, 4), known=True)
        assert wake.entries == {"a": WakeEntry(now(clock, 9)), "b": WakeEntry(now(clock, 4))}


async def test_a_write_that_fails_and_cannot_be_discarded_fails_the_transition() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({})
    host = StandIn(clock, {"a": None})
    async with running(wake, host) as index:
        wake.fail_writes = wake.fail_discard = True
        with pytest.raises(WakeIndexUnavailable, match="dsh index rebuild"):
            await index.going_live("a")
        wake.fail_writes = wake.fail_discard = False


async def test_changes_recorded_during_one_write_go_together_in_the_next() -> None:
    class Slow(MemoryWakeBackend):
        def __init__(self) -> None:
            super().__init__({})
            self.release = anyio.Event()

        async def write(self, changes: list[tuple[str, WakeEntry]]) -> None:  # type: ignore[override]
            await self.release.wait()
            await super().write(changes)

    clock = FakeClock()
    wake = Slow()
    host = StandIn(clock, {f"s{n}": None for n in range(5)})
    async with running(wake, host) as index:
        async with anyio.create_task_group() as group:
            group.start_soon(index.going_live, "s0")
            await until(lambda: index._inflight is not None)  # that write is under way
            for n in range(1, 5):
                group.start_soon(index.going_live, f"s{n}")
            await until(lambda: len(index.entries()) == 5)
            wake.release.set()
        assert [len(batch) for batch in wake.writes] == [1, 4]


async def test_the_rebuild_leaves_alone_what_sessions_did_meanwhile() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend()
    host = StandIn(clock, {"a": now(clock, 5), "b": now(clock, 6)})
    host.gate = anyio.Event()
    async with running(wake, host) as index:
        await index.going_live("a")  # nothing written: there is no usable copy yet
        assert wake.entries is None
        host.stored["a"] = now(clock, 50)
        await index.gone_cold("a", now(clock, 50), known=True)
        host.gate.set()
        await until(index.ready.is_set)
        assert wake.entries == {"a": WakeEntry(now(clock, 50)), "b": WakeEntry(now(clock, 6))}


async def test_a_log_that_cannot_be_read_during_a_rebuild_stays_dirty() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend()
    host = StandIn(clock, {"a": now(clock, 5)})
    host.broken.add("a")
    async with running(wake, host) as index:
        await until(index.ready.is_set)
        assert wake.entries == {"a": WakeEntry(None, dirty=True)}


async def test_a_rebuild_that_cannot_list_the_sessions_writes_nothing() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend()
    host = StandIn(clock, {"a": now(clock, 5)})
    host.list_fails = True
    async with running(wake, host) as index:
        await until(index.ready.is_set)
        await index.gone_cold("a", now(clock, 5), known=True)
    assert wake.entries is None  # the next start tries again


async def test_closing_compacts_the_stored_copy_into_one_snapshot() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({})
    host = StandIn(clock, {"a": None})
    replaced: list[dict[str, WakeEntry]] = []
    original = wake.replace

    async def spy(entries: dict[str, WakeEntry]) -> None:  # type: ignore[override]
        replaced.append(dict(entries))
        await original(entries)

    wake.replace = spy  # type: ignore[method-assign]
    async with running(wake, host) as index:
        await index.going_live("a")
        await index.gone_cold("a", now(clock, 7), known=True)
    assert replaced == [{"a": WakeEntry(now(clock, 7))}]


async def test_a_snapshot_that_fails_at_close_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({})
    host = StandIn(clock, {})
    async with running(wake, host):
        wake.fail_writes = wake.fail_discard = True
    assert "could not be removed either" in caplog.text


async def test_a_session_is_woken_its_lead_before_its_time() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({"a": WakeEntry(now(clock, 10))})
    host = StandIn(clock, {"a": now(clock, 10)})
    async with running(wake, host, lead_seconds=2) as index:
        assert index.lead_ms == 2_000
        assert index.armed_at("a") == now(clock, 8)
        clock.advance(7.9)
        await until(lambda: clock.sleeping >= 1)
        assert host.resumed == []
        clock.advance(0.1)
        await until(lambda: host.resumed == ["a"])


def storm(clock: FakeClock, count: int, seconds: float) -> dict[str, int | None]:
    """`count` Sessions due at the same instant, `seconds` from now."""
    return {f"s{number:03d}": now(clock, seconds) for number in range(count)}


class SlowStandIn(StandIn):
    """Each resume takes `resume_seconds` of wall time."""

    def __init__(self, clock: FakeClock, stored: dict[str, int | None], seconds: float) -> None:
        super().__init__(clock, stored)
        self.resume_seconds = seconds

    async def resume(self, session_id: str) -> None:
        self.clock.jump_wall(self.resume_seconds)
        await super().resume(session_id)


async def test_a_storm_is_woken_ahead_by_the_time_its_resumes_need_a_lone_session_is_not() -> None:
    clock = FakeClock()
    stored = {**storm(clock, 101, 100), "lone": now(clock, 50)}
    wake = MemoryWakeBackend({sid: WakeEntry(at) for sid, at in stored.items()})
    host = SlowStandIn(clock, stored, 0.01)  # as fast as the prior says: no new plan
    ahead = WakeAhead(prior_seconds=0.01, margin=1)
    async with running(wake, host, lead_seconds=2, ahead=ahead) as index:
        # 100 resumes at 10 ms each before the lead begins, all armed with the full count.
        assert {index.armed_at(sid) for sid in storm(clock, 101, 100)} == {now(clock, 97)}
        assert index.lead_for(now(clock, 100)) == 3_000
        assert index.armed_at("lone") == now(clock, 48)
        clock.advance(96.9)
        await until(lambda: host.resumed == ["lone"])
        await until(lambda: clock.sleeping >= 1)
        assert host.resumed == ["lone"]  # the storm not yet
        clock.advance(0.1)
        await until(lambda: len(host.resumed) == 102)
        assert index.woken == 102


async def test_the_cap_bounds_how_far_ahead_a_storm_is_woken() -> None:
    clock = FakeClock()
    stored = storm(clock, 101, 100)
    wake = MemoryWakeBackend({sid: WakeEntry(at) for sid, at in stored.items()})
    host = StandIn(clock, stored)
    async with running(wake, host, ahead=WakeAhead(prior_seconds=0.01, cap=20, margin=1)) as index:
        assert index.armed_at("s000") == now(clock, 100) - 200


async def test_the_storm_is_planned_again_with_the_rate_this_hosts_resumes_show() -> None:
    clock = FakeClock()
    stored = {**storm(clock, 11, 1_000), "first": now(clock, 1), "retry": now(clock, 500)}
    wake = MemoryWakeBackend({sid: WakeEntry(at) for sid, at in stored.items()})
    host = SlowStandIn(clock, stored, 0.05)
    ahead = WakeAhead(prior_seconds=0.001, margin=1)
    async with running(wake, host, ahead=ahead) as index:
        assert index.armed_at("s000") == now(clock, 1_000) - 10
        clock.advance(1)
        await until(lambda: host.resumed == ["first"])
        # One resume took 50 ms here: ten others need 500 ms before the lead.
        await until(lambda: index.armed_at("s000") == stored["s000"] - 500)  # type: ignore[operator]
        assert ahead.measured == 1 and ahead.rate == pytest.approx(20)
        assert index.armed_at("retry") == stored["retry"]  # alone in its second


async def test_the_rate_counts_each_wake_s_claim_as_well_as_its_resume() -> None:
    class SlowClaims(MemoryWakeBackend):
        async def claim(self, session_id: str) -> bool:
            clock.jump_wall(0.03)  # a round trip to a shared index
            return True

    clock = FakeClock()
    stored = {"first": now(clock, 1)}
    wake = SlowClaims({sid: WakeEntry(at) for sid, at in stored.items()})
    host = SlowStandIn(clock, stored, 0.02)
    ahead = WakeAhead(prior_seconds=0.001, margin=1)
    async with running(wake, host, ahead=ahead):
        clock.advance(1)
        await until(lambda: host.resumed == ["first"])
        await until(lambda: ahead.measured == 1)
        assert ahead.cost_seconds == pytest.approx(0.05)


async def test_an_entry_moving_to_another_second_leaves_its_old_crowd() -> None:
    clock = FakeClock()
    stored = storm(clock, 3, 100)
    wake = MemoryWakeBackend({sid: WakeEntry(at) for sid, at in stored.items()})
    host = StandIn(clock, stored)
    async with running(wake, host, ahead=WakeAhead(prior_seconds=0.01, margin=1)) as index:
        assert index.lead_for(now(clock, 100)) == 20
        await index.going_live("s000")
        host.live.add("s000")
        host.stored["s000"] = now(clock, 200)
        await host.close("s000")
        assert index.lead_for(now(clock, 100)) == 10
        assert index.armed_at("s000") == now(clock, 200)
        host.stored["s001"] = None
        await index.going_live("s001")
        await host.close("s001")
        assert index.lead_for(now(clock, 100)) == 0
        assert index.armed_at("s002") == now(clock, 100) - 20  # armed with the count it had


class SharedStore(MemoryWakeBackend):
    """A wake store other hosts write too (PostgreSQL's shape): `due` hands over what
    they left; `claims` says which claims this host wins."""

    shared = True
    sweep_seconds = 1.0

    def __init__(self, entries: dict[str, WakeEntry]) -> None:
        super().__init__(entries)
        self.handed: list[tuple[str, WakeEntry]] = []
        self.sweeps: list[int] = []
        self.sweep_fails = False
        self.lost: set[str] = set()

    async def due(self, horizon_ms: int) -> list[tuple[str, WakeEntry]]:
        self.sweeps.append(horizon_ms)
        if self.sweep_fails:
            raise WakeBackendError("cannot sweep the shared index: the server went away")
        handed, self.handed = self.handed, []
        return handed

    async def claim(self, session_id: str) -> bool:
        return session_id not in self.lost


async def test_a_shared_index_adopts_what_the_sweep_hands_over_and_wakes_dead_hosts_sessions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "dsh.wake.index")
    clock = FakeClock()
    # s-live is live on another host (dirty), s-old was theirs and is due later.
    wake = SharedStore({"s-live": WakeEntry(None, True), "s-old": WakeEntry(now(clock, 50))})
    host = StandIn(clock, {"s-live": None, "s-old": None, "s-dead": now(clock, 5), "s-due": 1})
    async with running(wake, host) as index:
        await until(lambda: index.ready.is_set())
        assert host.derived == []  # another host's dirty entry is not derived here
        assert index.armed_at("s-live") is None and index.armed_at("s-old") == now(clock, 50)
        # The sweep looks the lead plus one period ahead.
        await until(lambda: wake.sweeps == [now(clock, 1)])
        wake.handed = [
            ("s-dead", WakeEntry(None, True)),  # a dead host's: nobody holds it
            ("s-due", WakeEntry(now(clock, 0.5))),
            ("s-mine", WakeEntry(9)),
        ]
        host.live.add("s-mine")
        await index.going_live("s-mine")
        clock.advance(1)
        await until(lambda: "s-dead" in host.resumed, "the dead host's Session to be taken")
        assert index.armed_at("s-due") == now(clock, -0.5) or "s-due" in host.resumed
        await until(lambda: "s-due" in host.resumed)
        assert "s-mine" not in host.resumed and index.entry("s-mine") == WakeEntry(None, True)
        # A claim another host won wakes nothing here.
        wake.lost.add("s-other")
        wake.handed = [("s-other", WakeEntry(now(clock, 0)))]
        wake.sweep_fails = True
        clock.advance(1)
        await until(lambda: len(wake.sweeps) == 3)
        clock.advance(1)
        await until(lambda: len(wake.sweeps) == 4)
        wake.sweep_fails = False
        clock.advance(1)
        await until(lambda: len(wake.sweeps) == 5 and index.entry("s-other") is not None)
        for _ in range(10):
            await anyio.lowlevel.checkpoint()
        assert "s-other" not in host.resumed
    assert caplog.text.count("the server went away; sweeping again every 1 s") == 1
    assert caplog.text.count("can be swept again") == 1
    # Shared: never rewritten whole at the end (only the changes of this host).
    assert wake.entries is not None and wake.entries["s-live"] == WakeEntry(None, True)


async def test_on_a_shared_index_going_live_marks_the_session_dirty_even_when_it_looks_due() -> (
    None
):
    clock = FakeClock()
    wake = SharedStore({"s1": WakeEntry(now(clock, -5))})
    host = StandIn(clock, {"s1": None})
    async with running(wake, host) as index:
        wake.writes.clear()
        await index.going_live("s1")
        # This host's copy may be stale (another host may have delivered and removed it).
        assert wake.writes == [[("s1", WakeEntry(now(clock, -5), True))]]


async def test_a_new_store_without_index_or_logs_starts_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "dsh.wake.index")
    clock = FakeClock()
    wake = MemoryWakeBackend()
    async with running(wake, StandIn(clock)) as index:
        # Done within start-up: no line of it can follow the host's announcement.
        assert index.ready.is_set() and wake.entries == {}
    assert [r.levelno for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert [r.getMessage() for r in caplog.records] == [
        "there is no wake index yet; starting an empty one (no Session logs yet)"
    ]


async def test_logs_without_an_index_are_rebuilt_with_a_warning_counting_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    async with running(MemoryWakeBackend(), StandIn(clock, {"a": None, "b": None})) as index:
        await until(index.ready.is_set)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["there is no wake index yet; rebuilding it from the 2 Session logs"]


async def test_an_unusable_index_is_rebuilt_with_a_warning_even_without_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()

    class Corrupt(MemoryWakeBackend):
        async def load(self) -> LoadedIndex:
            return LoadedIndex(problem="the wake index cannot be used: line 2 is torn")

    async with running(Corrupt(), StandIn(clock)) as index:
        await until(index.ready.is_set)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "the wake index cannot be used: line 2 is torn; rebuilding it from the Session logs"
    ]


async def test_no_more_than_the_cap_are_live_ahead_the_rest_wait_for_their_plain_lead() -> None:
    clock = FakeClock()
    first = {f"a{number}": now(clock, 100) for number in range(5)}
    second = {f"b{number}": now(clock, 101) for number in range(5)}
    stored = {**first, **second}
    wake = MemoryWakeBackend({sid: WakeEntry(at) for sid, at in stored.items()})
    host = StandIn(clock, stored)
    ahead = WakeAhead(prior_seconds=1.0, cap=3, margin=1)
    async with running(wake, host, lead_seconds=2, ahead=ahead) as index:
        # Each crowded second is armed cap × 1 s before its lead (95 s and 96 s):
        # all ten come due early, but only three may be live ahead of their lead.
        assert {index.armed_at(sid) for sid in first} == {now(clock, 95)}
        clock.advance(96.5)
        await until(lambda: len(host.resumed) == 3)
        waiting = [sid for sid in stored if sid not in host.resumed]
        # Each refused one waits for its own plain lead.
        await until(
            lambda: [index.armed_at(sid) for sid in waiting]
            == [stored[sid] - 2_000 for sid in waiting]  # type: ignore[operator]
        )
        assert len(host.resumed) == 3 and ahead.live_ahead(clock.wall_ms()) == 3
        clock.advance(1.5)  # the first second's plain lead
        await until(lambda: set(first) <= set(host.resumed))
        clock.advance(1.0)  # the second's
        await until(lambda: len(host.resumed) == 10)
        assert index.woken == 10
