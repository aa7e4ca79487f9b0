"""The JSONL backend's I/O thread (`dsh.persistence.jsonl.worker`): its four rules."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import anyio
import anyio.lowlevel
import pytest

from dsh.persistence.jsonl.worker import IoWorker
from tests.support.deadlines import WAIT, until

pytestmark = pytest.mark.anyio


class Held:
    """A call that waits in the worker thread until `release` is set, then returns `result`."""

    def __init__(self, result: str = "done") -> None:
        self.result = result
        self.started = threading.Event()
        self.release = threading.Event()
        self.finished = False

    def __call__(self) -> str:
        self.started.set()
        assert self.release.wait(WAIT)
        self.finished = True
        return self.result

    async def running(self) -> None:
        assert await anyio.to_thread.run_sync(self.started.wait, WAIT)


@pytest.fixture
def worker() -> Iterator[IoWorker]:
    worker = IoWorker("test writer")
    yield worker
    worker.close()


async def test_calls_run_in_one_thread_of_their_own_in_the_order_made(worker: IoWorker) -> None:
    seen: list[tuple[int, str]] = []

    def record(number: int) -> int:
        seen.append((number, threading.current_thread().name))
        return number * 10

    async with anyio.create_task_group() as group:
        for number in range(20):
            group.start_soon(worker.run, record, number)
    assert await worker.run(record, 20) == 200

    assert [number for number, _ in seen] == list(range(21))
    assert {name for _, name in seen} == {"test writer"}
    assert threading.current_thread().name != "test writer"


async def test_a_call_is_handed_over_before_the_caller_first_waits(worker: IoWorker) -> None:
    held = Held()
    async with anyio.create_task_group() as group:
        group.start_soon(worker.run, held)
        # Without a pass of this task: the call was queued when `run` was entered.
        await held.running()
        held.release.set()


async def test_a_failing_call_raises_its_own_exception_to_its_caller(worker: IoWorker) -> None:
    def fail() -> None:
        raise FileNotFoundError("no such log")

    with pytest.raises(FileNotFoundError, match="no such log"):
        await worker.run(fail)
    assert await worker.run(len, "next") == 4  # the thread goes on


async def test_a_cancelled_caller_waits_for_its_started_call_to_finish(worker: IoWorker) -> None:
    slow_write = Held()
    returned: list[str] = []

    async def caller(scope: anyio.CancelScope) -> None:
        with scope:
            returned.append(await worker.run(slow_write))
            returned.append("after the write")  # never: cancelled at the next await
            await anyio.lowlevel.checkpoint()
            returned.append("never")

    scope = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(caller, scope)
        await slow_write.running()
        scope.cancel()
        await anyio.lowlevel.checkpoint()
        assert returned == []  # still waiting for the write, cancelled or not
        slow_write.release.set()

    assert slow_write.finished
    assert returned == ["done", "after the write"]


async def test_close_ends_the_thread_after_the_calls_made_before_and_a_later_call_starts_one(
    worker: IoWorker,
) -> None:
    order: list[int] = []
    assert not worker.running
    await worker.run(order.append, 1)
    first = worker._thread
    assert worker.running and first is not None
    worker.close()
    worker.close()  # twice is harmless
    assert not worker.running
    await until(lambda: not first.is_alive(), "the closed worker's thread to end")

    await worker.run(order.append, 2)
    assert worker.running and worker._thread is not first
    assert order == [1, 2]


def test_a_call_whose_event_loop_is_gone_is_run_and_the_thread_serves_the_next() -> None:
    worker = IoWorker("test writer")
    slow = Held()
    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(worker.run(slow))
        # The loop runs (and the task hands its call over) until the call has started.
        assert loop.run_until_complete(asyncio.to_thread(slow.started.wait, WAIT))
        task.cancel()  # the loop's own shutdown does this to every task left
        with pytest.raises(asyncio.CancelledError):
            loop.run_until_complete(task)
    finally:
        loop.close()
    slow.release.set()

    async def next_call() -> int:
        return await worker.run(len, "abc")

    try:
        assert anyio.run(next_call) == 3
        assert slow.finished
    finally:
        worker.close()


async def test_an_outcome_for_a_caller_that_left_is_dropped(worker: IoWorker) -> None:
    slow = Held("late")
    task = asyncio.get_running_loop().create_task(worker.run(slow))
    await slow.running()
    task.cancel()  # not anyio's cancellation: the loop's, which no shield stops
    with pytest.raises(asyncio.CancelledError):
        await task
    slow.release.set()
    assert await worker.run(len, "ab") == 2  # the late outcome went nowhere
    assert slow.finished


async def test_a_thread_that_is_gone_without_close_is_replaced(worker: IoWorker) -> None:
    assert await worker.run(len, "a") == 1
    first = worker._thread
    assert first is not None
    worker._calls.put(None)  # it ends unasked, as a forked child has no copy of it
    await until(lambda: not first.is_alive(), "the first thread to end")
    assert await worker.run(len, "ab") == 2
    assert worker._thread is not first and worker.running
