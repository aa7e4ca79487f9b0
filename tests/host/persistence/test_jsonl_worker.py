"""The JSONL backend's I/O thread (`dsh.persistence.jsonl.worker`): its four rules."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path

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


async def test_a_task_cancelled_by_its_own_cancel_still_waits_for_its_started_call(
    worker: IoWorker,
) -> None:
    # `asyncio.timeout`, `wait_for` and asyncio's task groups cancel this way, past
    # anyio's shield.
    slow = Held("late")
    task = asyncio.get_running_loop().create_task(worker.run(slow))
    await slow.running()
    for _ in range(2):  # and again while it waits on
        task.cancel()
        await anyio.lowlevel.checkpoint()
        assert not task.done()  # still waiting for the call
    slow.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slow.finished
    assert await worker.run(len, "ab") == 2


async def test_a_cancelled_caller_gets_the_cancellation_even_when_its_call_failed(
    worker: IoWorker,
) -> None:
    failing = Held()

    def fail() -> None:
        failing()
        raise OSError("disk gone")

    task = asyncio.get_running_loop().create_task(worker.run(fail))
    await failing.running()
    task.cancel()
    await anyio.lowlevel.checkpoint()
    failing.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_stop_iteration_from_a_call_reaches_its_caller_as_a_runtime_error(
    worker: IoWorker,
) -> None:
    # A future refuses StopIteration itself; the caller must not wait forever.
    with anyio.fail_after(WAIT):
        with pytest.raises(RuntimeError, match="StopIteration") as raised:
            await worker.run(next, iter(()))
    assert isinstance(raised.value.__cause__, StopIteration)
    assert await worker.run(len, "abc") == 3


def test_a_call_whose_event_loop_is_gone_is_run_and_the_thread_serves_the_next() -> None:
    # A caller waits for its call (rule 2), so only a loop closed under a waiting task
    # leaves an outcome with nobody to take it: the call as that task queued it.
    worker = IoWorker("test writer")
    loop = asyncio.new_event_loop()
    future = loop.create_future()
    loop.close()
    ran = threading.Event()
    worker._queue().put((ran.set, (), loop, future))

    async def next_call() -> int:
        return await worker.run(len, "abc")

    try:
        assert anyio.run(next_call) == 3
        assert ran.is_set() and not future.done()
    finally:
        worker.close()


async def test_calls_made_after_close_wait_for_the_closed_thread_one_at_a_time(
    worker: IoWorker,
) -> None:
    held = Held()
    spans: list[tuple[str, str]] = []
    busy = threading.Lock()

    def call(name: str) -> None:
        assert busy.acquire(blocking=False), f"{name} overlaps another call"
        spans.append((name, threading.current_thread().name))
        busy.release()

    async with anyio.create_task_group() as group:
        group.start_soon(worker.run, held)
        await held.running()
        first = worker._thread
        worker.close()  # the first thread ends after `held`
        for name in ("a", "b", "c"):
            group.start_soon(worker.run, call, name)
        await until(lambda: worker.running, "a second thread")
        second = worker._thread
        worker.close()  # and the second after a, b and c
        group.start_soon(worker.run, call, "d")  # a third thread
        await until(lambda: worker._thread is not second, "a third thread")
        held.release.set()

    assert [name for name, _ in spans] == ["a", "b", "c", "d"]
    assert await worker.run(call, "e") is None
    assert first is not None and second is not None
    assert not first.is_alive() and not second.is_alive()  # each joined the one before


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
async def test_a_forked_child_starts_a_thread_of_its_own_and_runs_none_of_the_parents_calls(
    worker: IoWorker, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    held = Held()

    def mark(text: str) -> None:
        with marks.open("a") as file:
            file.write(text)

    def in_the_child() -> None:
        # The forking thread is inside this test's event loop; a new thread has none.
        thread = threading.Thread(target=asyncio.run, args=(worker.run(mark, "c"),))
        thread.start()
        thread.join(WAIT)
        os._exit(0 if marks.exists() else 1)

    async with anyio.create_task_group() as group:
        group.start_soon(worker.run, held)
        await held.running()
        group.start_soon(worker.run, mark, "P")
        await until(
            lambda: worker._calls is not None and worker._calls.qsize() == 1,
            "the parent's call queued behind the held one",
        )
        pid = os.fork()
        if pid == 0:
            try:
                in_the_child()
            finally:
                os._exit(2)
        _, status = await anyio.to_thread.run_sync(os.waitpid, pid, 0)
        held.release.set()

    assert os.waitstatus_to_exitcode(status) == 0
    assert marks.read_text() == "cP"  # the child's call; the parent's ran once, here
