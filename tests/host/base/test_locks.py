from __future__ import annotations

import anyio
import pytest

from dsh.base.locks import KeyedLock
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


async def test_one_key_is_held_by_one_holder_at_a_time_in_order() -> None:
    lock = KeyedLock()
    order: list[str] = []

    async def hold(name: str) -> None:
        async with lock.hold("s1"):
            order.append(f"{name} in")
            await anyio.lowlevel.checkpoint()
            order.append(f"{name} out")

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            for name in ("a", "b", "c"):
                group.start_soon(hold, name)
    assert order == ["a in", "a out", "b in", "b out", "c in", "c out"]
    assert len(lock) == 0  # nobody holds or waits: nothing is kept


async def test_different_keys_never_wait_for_each_other() -> None:
    lock = KeyedLock()
    await lock.acquire("s1")
    with anyio.fail_after(WAIT):
        async with lock.hold("s2"):
            assert lock.locked("s1") and lock.locked("s2")
    lock.release("s1")
    assert not lock.locked("s1") and len(lock) == 0


async def test_waiting_counts_who_waits_for_a_key_but_not_its_holder() -> None:
    lock = KeyedLock()
    assert lock.waiting("s1") == 0
    await lock.acquire("s1")

    async def wait_in_turn() -> None:
        async with lock.hold("s1"):
            pass

    async with anyio.create_task_group() as group:
        group.start_soon(wait_in_turn)
        with anyio.fail_after(WAIT):
            while not lock.waiting("s1"):
                await anyio.lowlevel.checkpoint()
        assert (lock.waiting("s1"), lock.waiting("s2")) == (1, 0)
        lock.release("s1")
    assert lock.waiting("s1") == 0 and len(lock) == 0


async def test_acquire_nowait_takes_only_a_free_lock() -> None:
    lock = KeyedLock()
    assert lock.acquire_nowait("s1") is True
    assert lock.acquire_nowait("s1") is False
    assert lock.locked("s1")
    lock.release("s1")
    assert lock.acquire_nowait("s1") is True
    lock.release("s1")
    assert len(lock) == 0


async def test_a_free_lock_is_taken_without_yielding_to_others() -> None:
    lock = KeyedLock()
    ran: list[str] = []

    async def other() -> None:
        ran.append("other")

    async with anyio.create_task_group() as group:
        group.start_soon(other)
        await lock.acquire("s1")  # uncontended: no checkpoint, so `other` has not run
        assert ran == []
        lock.release("s1")


async def test_a_waiter_that_is_cancelled_leaves_nothing_behind() -> None:
    lock = KeyedLock()
    await lock.acquire("s1")
    waiting = anyio.Event()

    async def waiter(scope: anyio.CancelScope) -> None:
        with scope:
            waiting.set()
            await lock.acquire("s1")

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            scope = anyio.CancelScope()
            group.start_soon(waiter, scope)
            await waiting.wait()
            await anyio.lowlevel.checkpoint()  # the waiter is now inside acquire
            scope.cancel()
    lock.release("s1")
    assert len(lock) == 0  # neither the holder's nor the waiter's entry remains
