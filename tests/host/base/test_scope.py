from __future__ import annotations

import anyio
import pytest

from dsh.base.errors import ScopeClosed
from dsh.base.scope import Scope
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


class Boom(Exception):
    pass


def recorder(log: list[str], name: str) -> object:
    def dispose() -> None:
        log.append(name)

    return dispose


async def test_disposers_run_newest_first_and_async_ones_are_awaited() -> None:
    log: list[str] = []
    scope = Scope("s")

    async def slow() -> None:
        await anyio.lowlevel.checkpoint()
        log.append("async")

    scope.add(lambda: log.append("first"))
    scope.add(slow)
    scope.add(lambda: log.append("last"))

    await scope.aclose()

    assert log == ["last", "async", "first"]


async def test_closing_twice_runs_each_disposer_only_once() -> None:
    calls: list[str] = []
    scope = Scope()
    scope.add(lambda: calls.append("x"))

    await scope.aclose()
    await scope.aclose()

    assert calls == ["x"]
    assert scope.closed
    assert len(scope) == 0


async def test_a_concurrent_second_close_waits_for_the_first_to_finish() -> None:
    release = anyio.Event()
    finished: list[str] = []
    scope = Scope()

    async def blocked() -> None:
        await release.wait()
        finished.append("disposer")

    scope.add(blocked)
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(scope.aclose)
            await anyio.lowlevel.checkpoint()

            async def second() -> None:
                await scope.aclose()
                finished.append("second close")

            group.start_soon(second)
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
            assert finished == []
            release.set()

    assert finished == ["disposer", "second close"]


async def test_every_disposer_runs_even_when_one_fails_and_the_failure_is_reraised() -> None:
    log: list[str] = []
    scope = Scope()
    scope.add(lambda: log.append("oldest"))

    def fail() -> None:
        raise Boom("middle")

    scope.add(fail)
    scope.add(lambda: log.append("newest"))

    with pytest.raises(Boom, match="middle"):
        await scope.aclose()

    assert log == ["newest", "oldest"]


async def test_several_failures_are_reraised_together_as_an_exception_group() -> None:
    scope = Scope("grouped")

    def fail_sync() -> None:
        raise Boom("sync")

    async def fail_async() -> None:
        raise ValueError("async")

    scope.add(fail_sync)
    scope.add(fail_async)

    with pytest.raises(ExceptionGroup) as caught:
        await scope.aclose()

    assert "grouped: 2 disposers failed" in str(caught.value)
    assert [type(error) for error in caught.value.exceptions] == [ValueError, Boom]


async def test_adding_to_a_closed_scope_raises_scope_closed_naming_the_scope() -> None:
    scope = Scope("plugin x")
    await scope.aclose()

    with pytest.raises(ScopeClosed, match="plugin x is closed"):
        scope.add(lambda: None)


async def test_adding_while_closing_raises_scope_closed() -> None:
    scope = Scope()
    errors: list[Exception] = []

    def late_register() -> None:
        try:
            scope.add(lambda: None)
        except ScopeClosed as error:
            errors.append(error)

    scope.add(late_register)
    await scope.aclose()

    assert len(errors) == 1


async def test_add_returns_the_disposer_and_discard_forgets_it_without_running_it() -> None:
    ran: list[str] = []
    scope = Scope()

    def dispose() -> None:
        ran.append("x")

    assert scope.add(dispose) is dispose
    scope.discard(dispose)
    scope.discard(dispose)  # forgetting twice is harmless
    await scope.aclose()

    assert ran == []


async def test_disposal_completes_even_when_the_closer_is_cancelled() -> None:
    release = anyio.Event()
    log: list[str] = []
    scope = Scope()
    scope.add(lambda: log.append("older"))

    async def slow() -> None:
        await release.wait()
        log.append("slow")

    scope.add(slow)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            cancel = anyio.CancelScope()

            async def closer() -> None:
                with cancel:
                    await scope.aclose()
                    log.append("closer returned")
                    # The cancellation was only deferred: the next checkpoint delivers it.
                    await anyio.lowlevel.checkpoint()
                    log.append("not reached")

            group.start_soon(closer)
            await anyio.lowlevel.checkpoint()
            cancel.cancel()
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
            assert log == []  # still inside the shielded disposal
            release.set()

    assert log == ["slow", "older", "closer returned"]
    assert cancel.cancelled_caught


async def test_a_child_scope_closes_with_its_parent_before_older_disposers() -> None:
    log: list[str] = []
    parent = Scope("parent")
    parent.add(lambda: log.append("parent disposer"))
    child = parent.child()
    child.add(lambda: log.append("child disposer"))

    await parent.aclose()

    assert child.closed
    assert child.name == "parent/child"
    assert log == ["child disposer", "parent disposer"]


async def test_a_child_scope_closed_on_its_own_detaches_from_its_parent() -> None:
    log: list[str] = []
    parent = Scope()
    child = parent.child("kid")
    child.add(lambda: log.append("child"))
    assert len(parent) == 1

    await child.aclose()
    assert len(parent) == 0
    await parent.aclose()

    assert log == ["child"]


async def test_a_joint_scope_closes_when_its_first_parent_closes_and_leaves_the_other() -> None:
    log: list[str] = []
    agent = Scope("agent")
    plugin = Scope("plugin")
    installation = Scope.joint(agent, plugin, name="plugin in agent")
    installation.add(lambda: log.append("installation"))

    await agent.aclose()

    assert installation.closed
    assert log == ["installation"]
    assert len(plugin) == 0
    await plugin.aclose()
    assert log == ["installation"]


async def test_a_joint_scope_closes_when_its_second_parent_closes_and_leaves_the_other() -> None:
    log: list[str] = []
    agent = Scope("agent")
    plugin = Scope("plugin")
    installation = Scope.joint(agent, plugin)
    installation.add(lambda: log.append("installation"))

    await plugin.aclose()

    assert installation.closed
    assert log == ["installation"]
    assert len(agent) == 0
    assert not agent.closed


async def test_a_joint_scope_failure_reaches_the_parent_that_closed_it() -> None:
    agent = Scope("agent")
    plugin = Scope("plugin")
    installation = Scope.joint(agent, plugin)

    def fail() -> None:
        raise Boom("unwind")

    installation.add(fail)

    with pytest.raises(Boom, match="unwind"):
        await plugin.aclose()
    assert len(agent) == 0


async def test_a_joint_scope_with_a_closed_parent_is_refused_and_registers_nowhere() -> None:
    agent = Scope("agent")
    plugin = Scope("plugin")
    await plugin.aclose()

    with pytest.raises(ScopeClosed, match="plugin is closed"):
        Scope.joint(agent, plugin)

    assert len(agent) == 0
