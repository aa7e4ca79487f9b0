from __future__ import annotations

import anyio
import pytest

from dsh.testing import FakeClock
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


async def settle() -> None:
    for _ in range(5):
        await anyio.lowlevel.checkpoint()


def test_a_fake_clock_starts_at_the_given_wall_time_with_no_elapsed_time() -> None:
    clock = FakeClock(wall_ms=1_000)

    assert clock.wall_ms() == 1_000
    assert clock.elapsed == 0.0
    assert clock.sleeping == 0


def test_the_default_start_is_2026_01_01_utc() -> None:
    assert FakeClock().wall_ms() == 1_767_225_600_000


async def test_a_sleeper_wakes_only_once_its_deadline_has_been_advanced_past() -> None:
    clock = FakeClock()
    woke: list[float] = []

    async def sleeper() -> None:
        await clock.sleep(10)
        woke.append(clock.elapsed)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(sleeper)
            await settle()
            assert clock.sleeping == 1

            clock.advance(9.5)
            await settle()
            assert woke == []

            clock.advance(0.5)
            await settle()

    assert woke == [10.0]
    assert clock.sleeping == 0
    assert clock.sleeps == [10]


async def test_advance_moves_wall_time_and_wakes_sleepers_in_deadline_order() -> None:
    clock = FakeClock(wall_ms=0)
    order: list[str] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        order.append(name)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(sleeper, "late", 3)
            group.start_soon(sleeper, "early", 1)
            await settle()
            clock.advance(5)

    assert sorted(order) == ["early", "late"]
    assert clock.wall_ms() == 5_000
    assert clock.elapsed == 5


async def test_a_zero_or_negative_sleep_returns_without_advancing() -> None:
    clock = FakeClock()
    with anyio.fail_after(WAIT):
        await clock.sleep(0)
        await clock.sleep(-1)

    assert clock.sleeping == 0
    assert clock.elapsed == 0


def test_jump_wall_moves_only_the_wall_clock_in_either_direction() -> None:
    clock = FakeClock(wall_ms=10_000)

    clock.jump_wall(-5)
    assert clock.wall_ms() == 5_000
    clock.jump_wall(2.5)
    assert clock.wall_ms() == 7_500
    assert clock.elapsed == 0


async def test_jump_wall_does_not_wake_sleepers() -> None:
    clock = FakeClock()
    woke: list[str] = []

    async def sleeper() -> None:
        await clock.sleep(1)
        woke.append("woke")

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(sleeper)
            await settle()
            clock.jump_wall(3600)
            await settle()
            assert woke == []
            clock.advance(1)

    assert woke == ["woke"]


async def test_a_cancelled_sleep_no_longer_counts_as_sleeping() -> None:
    clock = FakeClock()
    scopes: list[anyio.CancelScope] = []

    async def sleeper(seconds: float) -> None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            await clock.sleep(seconds)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(sleeper, 5)
            group.start_soon(sleeper, 10)
            await settle()
            assert clock.sleeping == 2

            scopes[0].cancel()
            await settle()
            assert clock.sleeping == 1

            clock.advance(10)


def test_advance_refuses_to_move_elapsed_time_backwards() -> None:
    clock = FakeClock()

    with pytest.raises(ValueError, match="cannot go back"):
        clock.advance(-1)
    assert clock.elapsed == 0


async def test_waking_counts_the_sleepers_woken_whose_task_has_not_run_yet() -> None:
    clock = FakeClock()
    woke: list[str] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(name)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(sleeper, "a", 1)
            group.start_soon(sleeper, "b", 1)
            group.start_soon(sleeper, "c", 5)
            await settle()
            clock.advance(1)
            # Woken, not yet run: what a test stepping time must wait for.
            assert (clock.waking, clock.sleeping, woke) == (2, 1, [])
            await settle()
            assert (clock.waking, sorted(woke)) == (0, ["a", "b"])
            clock.advance(4)
            group.cancel_scope.cancel()  # woken and cancelled before it ran
    assert clock.waking == 0
