from __future__ import annotations

import logging

import anyio
import pytest

from dsh.base.errors import TaskSetClosed
from dsh.base.tasks import TaskSet
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


async def test_started_tasks_run_with_their_arguments() -> None:
    seen: list[tuple[str, int]] = []

    async def work(name: str, number: int) -> None:
        seen.append((name, number))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group, name="t")
            tasks.start_soon(work, "a", 1)
            tasks.start_soon(work, "b", 2, name="second")

    assert sorted(seen) == [("a", 1), ("b", 2)]
    assert len(tasks) == 0


async def test_aclose_cancels_running_tasks_and_waits_until_they_finished() -> None:
    cleaned: list[str] = []
    started = anyio.Event()

    async def forever(name: str) -> None:
        try:
            started.set()
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.lowlevel.checkpoint()
            cleaned.append(name)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group)
            tasks.start_soon(forever, "one")
            tasks.start_soon(forever, "two")
            with anyio.fail_after(WAIT):
                await started.wait()
            assert len(tasks) == 2

            await tasks.aclose()

            assert sorted(cleaned) == ["one", "two"]
            assert len(tasks) == 0
            assert tasks.closed


async def test_aclose_with_nothing_running_returns_and_is_idempotent() -> None:
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group)
            await tasks.aclose()
            await tasks.aclose()
            assert tasks.closed


async def test_the_returned_cancel_scope_stops_just_that_task() -> None:
    stopped: list[str] = []
    release = anyio.Event()

    async def wait(name: str) -> None:
        try:
            await release.wait()
        finally:
            stopped.append(name)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group)
            first = tasks.start_soon(wait, "first")
            tasks.start_soon(wait, "second")
            await anyio.lowlevel.checkpoint()
            first.cancel()
            with anyio.fail_after(WAIT):
                while stopped != ["first"]:
                    await anyio.lowlevel.checkpoint()
            assert len(tasks) == 1
            release.set()

    assert stopped == ["first", "second"]


async def test_a_failing_task_is_logged_and_does_not_cancel_its_siblings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = anyio.Event()
    finished: list[str] = []

    async def fail() -> None:
        raise RuntimeError("kaboom")

    async def sibling() -> None:
        await release.wait()
        finished.append("sibling")

    with caplog.at_level(logging.ERROR, logger="dsh.base.tasks"):
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                tasks = TaskSet(group, name="agent x")
                tasks.start_soon(sibling)
                tasks.start_soon(fail)
                with anyio.fail_after(WAIT):
                    while not caplog.records:
                        await anyio.lowlevel.checkpoint()
                release.set()

    assert finished == ["sibling"]
    [record] = caplog.records
    assert "agent x: task" in record.getMessage()
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)


async def test_start_after_close_raises_task_set_closed() -> None:
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group, name="closed set")
            await tasks.aclose()

            async def never() -> None:
                raise AssertionError("unreachable: must not start")

            with pytest.raises(TaskSetClosed, match="closed set is closed"):
                tasks.start_soon(never)


async def test_a_task_cancelled_before_it_started_never_runs_its_body() -> None:
    ran: list[str] = []

    async def body() -> None:
        await anyio.lowlevel.checkpoint()
        ran.append("body")

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group)
            tasks.start_soon(body)
            await tasks.aclose()

    assert ran == []


async def test_a_cancelled_closer_still_waits_for_every_task_to_finish() -> None:
    release = anyio.Event()
    log: list[str] = []

    async def stubborn() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await release.wait()
            log.append("task finished")

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group)
            tasks.start_soon(stubborn)
            await anyio.lowlevel.checkpoint()
            closer_scope = anyio.CancelScope()

            async def closer() -> None:
                with closer_scope:
                    await tasks.aclose()
                    log.append("closer returned")

            group.start_soon(closer)
            await anyio.lowlevel.checkpoint()
            closer_scope.cancel()
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
            assert log == []
            release.set()

    assert log == ["task finished", "closer returned"]


async def test_closing_from_inside_an_own_task_waits_for_the_others_but_not_itself() -> None:
    log: list[str] = []
    other_started = anyio.Event()

    async def other() -> None:
        try:
            other_started.set()
            await anyio.sleep_forever()
        finally:
            log.append("other cancelled")

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group)

            async def closes_its_own_set() -> None:
                await other_started.wait()
                with anyio.fail_after(WAIT):
                    await tasks.aclose()
                log.append("aclose returned")
                try:
                    await anyio.lowlevel.checkpoint()
                except anyio.get_cancelled_exc_class():
                    log.append("own task cancelled")
                    raise

            tasks.start_soon(other)
            tasks.start_soon(closes_its_own_set)

    assert log == ["other cancelled", "aclose returned", "own task cancelled"]
    assert len(tasks) == 0


async def test_closing_from_the_only_own_task_returns_at_once() -> None:
    log: list[str] = []

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            tasks = TaskSet(group)

            async def closes_itself() -> None:
                await tasks.aclose()
                log.append("returned")

            tasks.start_soon(closes_itself)

    assert log == ["returned"]
