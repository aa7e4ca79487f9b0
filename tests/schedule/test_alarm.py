from __future__ import annotations

import gc
import logging
import weakref
from collections.abc import AsyncIterator, Callable

import anyio
import pytest

from dsh import TaskSet
from dsh.testing import FakeClock
from dsh_tool_schedule import ScheduleConfig
from dsh_tool_schedule.alarm import Alarm, Alarms

from .conftest import START_MS, settle

pytestmark = pytest.mark.anyio


class Woken:
    """Records which keys an alarm woke, in order."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def __call__(self, key: str) -> None:
        self.keys.append(key)

    def waker(self, key: str) -> Callable[[], None]:
        return lambda: self(key)


@pytest.fixture
async def clock() -> FakeClock:
    return FakeClock(START_MS)


@pytest.fixture
async def alarm(clock: FakeClock) -> AsyncIterator[Alarm]:
    async with anyio.create_task_group() as group:
        alarm = Alarm(clock, ScheduleConfig(), TaskSet(group, name="alarm under test"))
        try:
            yield alarm
        finally:
            await alarm.aclose()


async def run_to(clock: FakeClock, target_ms: int) -> None:
    """Advance by exactly the sleeps the alarm asks for until the wall clock reads `target_ms`."""
    await settle()
    while clock.wall_ms() < target_ms and clock.sleeping:
        clock.advance(clock.sleeps[-1])
        await settle()


async def test_a_target_is_woken_once_the_wall_clock_reaches_it(
    alarm: Alarm, clock: FakeClock
) -> None:
    woken = Woken()
    alarm.set("a", START_MS + 150_000, woken.waker("a"))
    await run_to(clock, START_MS + 150_000)

    assert woken.keys == ["a"]
    assert clock.wall_ms() == START_MS + 150_000
    # Segments of at most 60 s, the last long one ending 0.25 s early.
    assert [round(sleep, 3) for sleep in clock.sleeps] == [60.0, 60.0, 29.75, 0.25]
    assert len(alarm) == 0
    assert clock.sleeping == 0  # an empty alarm has no task and no timer


async def test_due_targets_are_woken_earliest_first_and_a_tie_in_set_order(
    alarm: Alarm, clock: FakeClock
) -> None:
    woken = Woken()
    alarm.set("late", START_MS + 2_000, woken.waker("late"))
    alarm.set("tie-1", START_MS + 1_000, woken.waker("tie-1"))
    alarm.set("tie-2", START_MS + 1_000, woken.waker("tie-2"))
    await settle()
    clock.advance(5)
    await settle()

    assert woken.keys == ["tie-1", "tie-2", "late"]


async def test_set_replaces_the_keys_target_and_clear_forgets_it(
    alarm: Alarm, clock: FakeClock
) -> None:
    woken = Woken()
    alarm.set("a", START_MS + 1_000, woken.waker("a"))
    alarm.set("a", START_MS + 3_000, woken.waker("a"))
    alarm.set("b", START_MS + 2_000, woken.waker("b"))
    alarm.clear("b")
    alarm.clear("never set")
    await settle()
    clock.advance(2.5)
    await settle()
    assert woken.keys == []
    assert len(alarm) == 1

    clock.advance(0.5)
    await settle()
    assert woken.keys == ["a"]


async def test_clearing_the_earliest_target_ends_its_sleep(alarm: Alarm, clock: FakeClock) -> None:
    woken = Woken()
    alarm.set("a", START_MS + 10_000, woken.waker("a"))
    await settle()
    assert clock.sleeping == 1

    alarm.clear("a")
    await settle()
    assert clock.sleeping == 0

    # A later target starts the wait again.
    alarm.set("b", START_MS + 1_000, woken.waker("b"))
    await run_to(clock, START_MS + 1_000)
    assert woken.keys == ["b"]


async def test_an_earlier_target_shortens_the_sleep(alarm: Alarm, clock: FakeClock) -> None:
    woken = Woken()
    alarm.set("late", START_MS + 50_000, woken.waker("late"))
    await settle()
    alarm.set("soon", START_MS + 5_000, woken.waker("soon"))
    await settle()
    assert round(clock.sleeps[-1], 3) == 4.75

    await run_to(clock, START_MS + 5_000)
    assert woken.keys == ["soon"]
    assert clock.sleeping == 1  # on toward "late"


async def test_a_wall_clock_rollback_never_wakes_early_and_a_jump_wakes_at_the_next_wake(
    alarm: Alarm, clock: FakeClock
) -> None:
    woken = Woken()
    alarm.set("a", START_MS + 120_000, woken.waker("a"))
    await settle()
    clock.jump_wall(-600)
    clock.advance(60)
    await settle()
    clock.advance(60)
    await settle()
    assert woken.keys == []  # two segments slept, but the wall clock reads 10 min earlier

    clock.jump_wall(3_600)
    clock.advance(clock.sleeps[-1])
    await settle()
    assert woken.keys == ["a"]


async def test_a_wake_that_raises_is_logged_and_the_others_still_run(
    alarm: Alarm, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    woken = Woken()

    def broken() -> None:
        raise RuntimeError("boom")

    alarm.set("broken", START_MS + 1_000, broken)
    alarm.set("fine", START_MS + 1_000, woken.waker("fine"))
    await settle()
    with caplog.at_level(logging.ERROR, logger="dsh_tool_schedule.alarm"):
        clock.advance(1)
        await settle()

    assert woken.keys == ["fine"]
    assert "schedule alarm: waking 'broken' failed" in caplog.text
    assert "RuntimeError: boom" in caplog.text


async def test_replaced_targets_do_not_pile_up(alarm: Alarm, clock: FakeClock) -> None:
    woken = Woken()
    alarm.set("first", START_MS + 1_000, woken.waker("first"))
    for step in range(1_000):
        alarm.set("moving", START_MS + 5_000 + step, woken.waker("moving"))
    assert len(alarm._heap) <= 2 * len(alarm) + 65

    await run_to(clock, START_MS + 6_000)
    assert woken.keys == ["first", "moving"]


async def test_a_closed_alarm_ignores_new_targets(alarm: Alarm, clock: FakeClock) -> None:
    woken = Woken()
    alarm.set("a", START_MS + 1_000, woken.waker("a"))
    await settle()
    await alarm.aclose()
    assert clock.sleeping == 0

    alarm.set("b", START_MS + 500, woken.waker("b"))
    await settle()
    clock.advance(2)
    await settle()
    assert woken.keys == []
    assert clock.sleeping == 0


async def test_alarms_keeps_one_alarm_per_clock_and_closes_them_all() -> None:
    first, second = FakeClock(START_MS), FakeClock(START_MS)
    woken = Woken()
    async with anyio.create_task_group() as group:
        alarms = Alarms(group, ScheduleConfig())
        assert alarms.for_clock(first) is alarms.for_clock(first)
        assert alarms.for_clock(first) is not alarms.for_clock(second)
        alarms.for_clock(first).set("a", START_MS + 1_000, woken.waker("a"))
        alarms.for_clock(second).set("b", START_MS + 1_000, woken.waker("b"))
        await settle()
        second.advance(1)
        await settle()
        assert woken.keys == ["b"]

        await alarms.aclose()
        assert first.sleeping == 0
        first.advance(1)
        await settle()
        assert woken.keys == ["b"]


class Key:
    """A key an alarm may hold on to (or not)."""


async def test_a_cleared_or_replaced_target_keeps_nothing_of_its_key(
    alarm: Alarm, clock: FakeClock
) -> None:
    woken = Woken()
    early = Key()
    alarm.set("first", START_MS + 1_000, woken.waker("first"))
    alarm.set(early, START_MS + 86_400_000, woken.waker("early"))
    replaced = Key()
    alarm.set(replaced, START_MS + 90_000_000, woken.waker("replaced"))
    alarm.set(replaced, START_MS + 2_000, woken.waker("replaced"))
    gone = weakref.ref(early)
    alarm.clear(early)
    del early
    gc.collect()
    assert gone() is None  # its heap entry, if still there, holds no reference

    await run_to(clock, START_MS + 2_000)
    assert woken.keys == ["first", "replaced"]
    assert len(alarm) == 0


async def test_closing_forgets_every_target(alarm: Alarm, clock: FakeClock) -> None:
    kept = Key()
    alarm.set(kept, START_MS + 1_000, lambda: None)
    gone = weakref.ref(kept)
    del kept
    await alarm.aclose()
    gc.collect()
    assert gone() is None and len(alarm) == 0
