from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from dsh.testing import FakeClock
from dsh.wake import WakeTimer
from dsh.wake.timer import EARLY_WAKE_SECONDS, MAX_SEGMENT_SECONDS
from tests.support.deadlines import until

pytestmark = pytest.mark.anyio


class Fired:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, ids: list[str]) -> None:
        self.batches.append(ids)

    @property
    def ids(self) -> list[str]:
        return [session_id for batch in self.batches for session_id in batch]


async def test_armed_sessions_are_reported_when_due_earliest_first() -> None:
    clock, fired = FakeClock(), Fired()
    timer = WakeTimer(clock, fired)
    now = clock.wall_ms()
    timer.arm("late", now + 3_000)
    timer.arm("early", now + 1_000)
    async with anyio.create_task_group() as group:
        group.start_soon(timer.run)
        await until(lambda: clock.sleeping == 1)
        assert fired.ids == []
        clock.advance(1.0)
        await until(lambda: fired.ids == ["early"])
        clock.advance(2.0)
        await until(lambda: fired.ids == ["early", "late"])
        assert len(timer) == 0
        group.cancel_scope.cancel()


async def test_a_time_already_past_fires_at_once_and_due_ones_come_in_one_batch() -> None:
    clock, fired = FakeClock(), Fired()
    timer = WakeTimer(clock, fired)
    now = clock.wall_ms()
    for index in range(3):
        timer.arm(f"s{index}", now - index)
    async with anyio.create_task_group() as group:
        group.start_soon(timer.run)
        await until(lambda: fired.batches)
        assert fired.batches == [["s2", "s1", "s0"]]
        group.cancel_scope.cancel()


async def test_one_task_sleeps_for_every_armed_session_in_bounded_segments() -> None:
    clock, fired = FakeClock(), Fired()
    timer = WakeTimer(clock, fired)
    now = clock.wall_ms()
    for index in range(1_000):
        timer.arm(f"s{index}", now + 3_600_000 + index)
    async with anyio.create_task_group() as group:
        group.start_soon(timer.run)
        await until(lambda: clock.sleeping == 1)
        assert clock.sleeps == [MAX_SEGMENT_SECONDS]
        group.cancel_scope.cancel()


async def test_a_long_segment_ends_early_and_the_remainder_is_slept_again() -> None:
    clock, fired = FakeClock(), Fired()
    timer = WakeTimer(clock, fired)
    timer.arm("s", clock.wall_ms() + 10_000)
    async with anyio.create_task_group() as group:
        group.start_soon(timer.run)
        await until(lambda: clock.sleeping == 1)
        assert clock.sleeps == [pytest.approx(10 - EARLY_WAKE_SECONDS)]
        clock.advance(10 - EARLY_WAKE_SECONDS)
        await until(lambda: len(clock.sleeps) == 2)
        assert clock.sleeps[1] == pytest.approx(EARLY_WAKE_SECONDS)
        assert fired.ids == []
        clock.advance(EARLY_WAKE_SECONDS)
        await until(lambda: fired.ids == ["s"])
        group.cancel_scope.cancel()


async def test_an_earlier_arming_interrupts_the_current_sleep() -> None:
    clock, fired = FakeClock(), Fired()
    timer = WakeTimer(clock, fired)
    now = clock.wall_ms()
    async with anyio.create_task_group() as group:
        group.start_soon(timer.run)
        await anyio.lowlevel.checkpoint()
        timer.arm("late", now + 50_000)
        await until(lambda: clock.sleeping == 1)
        timer.arm("soon", now + 500)
        await until(lambda: clock.sleeps[-1] == pytest.approx(0.5))
        clock.advance(0.5)
        await until(lambda: fired.ids == ["soon"])
        assert timer.at("late") == now + 50_000
        group.cancel_scope.cancel()


async def test_a_disarmed_or_rearmed_session_fires_only_at_its_current_time() -> None:
    clock, fired = FakeClock(), Fired()
    timer = WakeTimer(clock, fired)
    now = clock.wall_ms()
    timer.arm("gone", now + 500)
    timer.arm("moved", now + 500)
    timer.disarm("gone")
    timer.arm("moved", now + 2_000)
    timer.arm("moved", now + 2_000)  # the same time again changes nothing
    assert "moved" in timer and "gone" not in timer
    async with anyio.create_task_group() as group:
        group.start_soon(timer.run)
        await until(lambda: clock.sleeping == 1)
        clock.advance(1.0)
        await until(lambda: clock.sleeping == 1)
        assert fired.ids == []
        clock.advance(1.0)
        await until(lambda: fired.ids == ["moved"])
        group.cancel_scope.cancel()


async def test_a_wall_clock_stepped_back_never_fires_early_and_forward_fires_at_the_next_wake() -> (
    None
):
    clock, fired = FakeClock(), Fired()
    timer = WakeTimer(clock, fired)
    timer.arm("s", clock.wall_ms() + 120_000)
    async with anyio.create_task_group() as group:
        group.start_soon(timer.run)
        await until(lambda: clock.sleeping == 1)
        clock.jump_wall(-3_600)
        clock.advance(MAX_SEGMENT_SECONDS)
        await until(lambda: len(clock.sleeps) == 2)
        assert fired.ids == []
        clock.jump_wall(7_200)
        clock.advance(MAX_SEGMENT_SECONDS)
        await until(lambda: fired.ids == ["s"])
        group.cancel_scope.cancel()


async def test_many_rearmings_keep_the_heap_small() -> None:
    clock, fired = FakeClock(), Fired()
    timer = WakeTimer(clock, fired)
    now = clock.wall_ms()
    for step in range(10_000):
        timer.arm("s", now + 1_000 + step)
    assert len(timer._heap) <= 2 * len(timer) + 65
    assert timer.at("s") == now + 1_000 + 9_999
