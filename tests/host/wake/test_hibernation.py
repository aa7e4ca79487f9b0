"""The Hibernator on its own: its settings, and what it does when a close fails."""

from __future__ import annotations

import anyio
import pytest

from dsh.testing import FakeClock
from dsh.wake import Hibernator, MemoryWakeBackend
from tests.support.deadlines import until

from .support import alarm_host

pytestmark = pytest.mark.anyio


def test_idle_seconds_must_be_positive() -> None:
    async def close(session_id: str) -> None:
        return None

    with pytest.raises(ValueError, match="idle_seconds must be positive, not 0"):
        Hibernator(
            idle_seconds=0,
            clock=FakeClock(),
            agent=lambda session_id: None,
            may_hibernate=lambda agent: True,
            close=close,
        )


async def test_a_close_that_fails_is_logged_and_the_others_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    async with alarm_host(clock, idle_seconds=5) as host:
        first = await host.create_session()
        second = await host.create_session()
        hibernator = host.lifecycle.hibernator
        assert hibernator is not None
        real = hibernator._close

        async def close(session_id: str) -> None:
            if session_id == first.session.id:
                raise RuntimeError("the disk went away")
            await real(session_id)

        hibernator._close = close
        clock.advance(5)
        await until(lambda: host.agent(second.session.id) is None and hibernator.hibernated == 1)
        assert "hibernating session" in caplog.text and "the disk went away" in caplog.text


async def test_a_session_closed_by_hand_is_forgotten_when_its_deadline_comes() -> None:
    clock = FakeClock()
    async with alarm_host(clock, idle_seconds=5) as host:
        agent = await host.create_session()
        hibernator = host.lifecycle.hibernator
        assert hibernator is not None
        hibernator.touch("not-live")  # touching a Session that is not live does nothing
        host.liveness._agents.pop(agent.session.id)  # gone without the lifecycle being told
        clock.advance(5)
        await until(lambda: hibernator.deadline(agent.session.id) is None)
        host.liveness._agents[agent.session.id] = agent
        await host.close_session(agent.session.id)
        assert hibernator.hibernated == 0


async def test_a_session_whose_writes_are_unconfirmed_or_that_is_due_stays_live(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    async with alarm_host(clock, wake_backend=MemoryWakeBackend({}), idle_seconds=5) as host:
        pending = await host.create_session()
        host.live.append(pending.session, "test/unflushed", {})
        assert await host.live.flush(pending.session)
        lifecycle = host.lifecycle
        assert lifecycle._may_hibernate(pending) is True
        coordinator = host.coordinator
        with monkeypatch.context() as patch:
            # Storage has confirmed one event less than the Session holds (writes failing).
            patch.setattr(coordinator, "durable_length", lambda session: len(session) - 1)
            assert lifecycle._may_hibernate(pending) is False
        due = await host.create_session()
        # An alarm already due that its owner has not rung yet: left to the owner.
        from .alarm_plugin import set_alarm

        gate = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(due.run_maintenance, gate.wait)  # the owner cannot ring meanwhile
            await until(lambda: due.phase == "maintenance")
            set_alarm(due, clock.wall_ms() - 1)
            assert await host.live.flush(due.session)
            assert lifecycle._may_hibernate(due) is False
            gate.set()
        child = await host.sessions.spawn_child(due)
        assert lifecycle._may_hibernate(child) is False  # its parent is still using it
