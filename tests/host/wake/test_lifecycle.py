"""The Host with wake and hibernation on: cold Sessions woken for plugins, idle ones closed."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from dsh.agents.agent import AgentPhase
from dsh.host.host import Host
from dsh.persistence.jsonl import JsonlBackend
from dsh.testing import FakeClock
from dsh.wake import JsonlWakeBackend, MemoryWakeBackend, WakeEntry
from dsh.wake.ahead import WakeAhead
from tests.support.deadlines import until

from .alarm_plugin import AlarmPlugin, rung, set_alarm
from .support import alarm_host

pytestmark = pytest.mark.anyio


async def make_alarm(host: Host, clock: FakeClock, seconds: float) -> tuple[str, int]:
    agent = await host.create_session()
    at = clock.wall_ms() + round(seconds * 1000)
    set_alarm(agent, at)
    assert await host.live.flush(agent.session)
    return agent.session.id, at


async def test_a_cold_session_is_woken_at_its_time_published_and_its_owner_delivers() -> None:
    clock, plugin = FakeClock(), AlarmPlugin()
    wake = MemoryWakeBackend({})
    async with alarm_host(clock, wake_backend=wake, plugin=plugin) as host:
        session_id, at = await make_alarm(host, clock, 30)
        await host.close_session(session_id)
        index = host.lifecycle.index
        assert index is not None and index.entry(session_id) == WakeEntry(at)
        assert wake.entries == {session_id: WakeEntry(at)}  # written before the close returned
        lead = index.lead_ms / 1000
        assert index.armed_at(session_id) == at - index.lead_ms
        clock.advance(30 - lead - 0.1)
        await until(lambda: clock.sleeping >= 1)
        assert host.agent(session_id) is None
        clock.advance(0.1)  # woken its lead before its time: nothing is due yet
        await until(lambda: host.agent(session_id) is not None)
        agent = host.agent(session_id)
        assert agent is not None and plugin.published.count(session_id) == 2
        await until(lambda: clock.sleeping >= 1)  # the owner waits for the time
        assert rung(agent.session) == []
        clock.advance(lead)  # its owner delivers at the time itself
        await until(lambda: rung(agent.session) == [at])
        await host.close_session(session_id)
        assert wake.entries == {}  # nothing more to wake it for


async def test_without_the_index_a_cold_session_is_never_woken() -> None:
    clock = FakeClock()
    async with alarm_host(clock) as host:
        session_id, _ = await make_alarm(host, clock, 1)
        await host.close_session(session_id)
        assert host.lifecycle.wakes is False
        clock.advance(3600)
        await anyio.lowlevel.checkpoint()
        assert host.agent(session_id) is None


async def test_an_idle_session_hibernates_and_its_alarm_still_rings_with_wake_on() -> None:
    clock, plugin = FakeClock(), AlarmPlugin()
    async with alarm_host(
        clock, wake_backend=MemoryWakeBackend({}), idle_seconds=5, plugin=plugin
    ) as host:
        session_id, at = await make_alarm(host, clock, 60)
        hibernator = host.lifecycle.hibernator
        assert hibernator is not None
        clock.advance(5)
        await until(lambda: hibernator.hibernated == 1)
        assert host.live.find(session_id) is None
        clock.advance(55)
        await until(lambda: host.agent(session_id) is not None)
        agent = host.agent(session_id)
        assert agent is not None
        await until(lambda: rung(agent.session) == [at])
        await until(lambda: host.coordinator.durable_length(agent.session) == len(agent.session))
        # Delivered and idle again: it hibernates, and nothing wakes it any more.
        clock.advance(5)
        await until(lambda: hibernator.hibernated == 2)
        assert host.lifecycle.index is not None
        assert host.lifecycle.index.entry(session_id) is None


async def test_without_wake_a_session_with_a_wake_time_is_not_hibernated() -> None:
    clock = FakeClock()
    async with alarm_host(clock, idle_seconds=5) as host:
        waiting, _ = await make_alarm(host, clock, 3600)
        plain = (await host.create_session()).session.id
        hibernator = host.lifecycle.hibernator
        assert hibernator is not None
        clock.advance(5)
        await until(lambda: host.agent(plain) is None)
        for _ in range(3):
            # Looked at again and again, and each time left live.
            clock.advance(5)
            await until(lambda: (hibernator.deadline(waiting) or 0) > clock.wall_ms())
            assert host.agent(waiting) is not None


async def test_a_watched_busy_or_queued_session_is_not_hibernated() -> None:
    clock = FakeClock()
    async with alarm_host(clock, idle_seconds=5) as host:
        watched = await host.create_session()
        busy = await host.create_session()
        release = host.lifecycle.hold(watched.session.id)
        gate = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(busy.run_maintenance, gate.wait)
            await until(lambda: busy.phase is AgentPhase.MAINTENANCE)
            hibernator = host.lifecycle.hibernator
            assert hibernator is not None
            for _ in range(2):
                clock.advance(5)
                for agent in (watched, busy):
                    session_id = agent.session.id
                    await until(
                        lambda sid=session_id: (hibernator.deadline(sid) or 0) > clock.wall_ms()
                    )
            assert hibernator.holds(watched.session.id) == 1
            assert host.agent(watched.session.id) is watched
            assert host.agent(busy.session.id) is busy
            gate.set()
        release()
        release()  # releasing twice is harmless
        clock.advance(5)
        await until(lambda: not host.agents())


async def test_activity_postpones_hibernation() -> None:
    clock = FakeClock()
    async with alarm_host(clock, idle_seconds=5) as host:
        agent = await host.create_session()
        clock.advance(4)
        host.live.append(agent.session, "test/activity", {})
        assert await host.live.flush(agent.session)
        hibernator = host.lifecycle.hibernator
        assert hibernator is not None
        clock.advance(4)
        await until(lambda: hibernator.deadline(agent.session.id) == clock.wall_ms() + 1_000)
        assert host.agent(agent.session.id) is agent
        clock.advance(1)
        await until(lambda: host.agent(agent.session.id) is None)


async def test_a_resume_during_a_close_waits_for_it_and_reads_the_whole_log() -> None:
    clock = FakeClock()
    async with alarm_host(clock, wake_backend=MemoryWakeBackend({})) as host:
        agent = await host.create_session()
        for n in range(20):
            host.live.append(agent.session, "test/tick", {"n": n})
        length = len(agent.session)
        async with anyio.create_task_group() as group:
            group.start_soon(host.close_session, agent.session.id)
            await anyio.lowlevel.checkpoint()
            resumed, fresh = await host.resume(agent.session.id)
        assert fresh and resumed is not agent
        assert len(resumed.session) == length + 1  # every event, then its end-seed


async def test_a_close_whose_last_writes_failed_reads_its_wake_time_from_storage() -> None:
    class Failing(JsonlBackend):
        fail = False

        async def append(self, session_id: str, events: object) -> None:  # type: ignore[override]
            if self.fail:
                raise OSError(28, "No space left on device")
            await super().append(session_id, events)  # type: ignore[arg-type]

    clock = FakeClock()
    wake = MemoryWakeBackend({})
    backend = Failing(Path(os.environ.get("TMPDIR", "/tmp")) / f"wake-fail-{os.getpid()}")
    async with alarm_host(clock, backend=backend, wake_backend=wake) as host:
        session_id, at = await make_alarm(host, clock, 30)
        agent = host.agent(session_id)
        assert agent is not None
        backend.fail = True
        set_alarm(agent, at - 10_000)  # never stored
        with pytest.raises(Exception, match="No space left"):
            await host.close_session(session_id)
        assert wake.entries == {session_id: WakeEntry(at)}  # what storage holds
        backend.fail = False


async def test_a_restart_reads_the_index_and_rings_the_alarm_due_while_it_was_down(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    data = tmp_path / "data"
    async with alarm_host(
        clock, backend=JsonlBackend(data), wake_backend=JsonlWakeBackend(data)
    ) as host:
        session_id, at = await make_alarm(host, clock, 10)
        other, later = await make_alarm(host, clock, 100)
    assert (data / "wake-index.jsonl").exists()
    clock.advance(20)  # the host is down when the first alarm is due
    plugin = AlarmPlugin()
    async with alarm_host(
        clock, backend=JsonlBackend(data), wake_backend=JsonlWakeBackend(data), plugin=plugin
    ) as host:
        index = host.lifecycle.index
        assert index is not None and index.rebuilt is False
        await until(lambda: host.agent(session_id) is not None)
        agent = host.agent(session_id)
        assert agent is not None
        await until(lambda: rung(agent.session) == [at])
        assert host.agent(other) is None and index.armed_at(other) == later - index.lead_ms
        assert plugin.published == [session_id]


async def test_deleting_the_index_file_rebuilds_it_from_the_logs_at_start(tmp_path: Path) -> None:
    clock = FakeClock()
    data = tmp_path / "data"
    async with alarm_host(
        clock, backend=JsonlBackend(data), wake_backend=JsonlWakeBackend(data)
    ) as host:
        session_id, at = await make_alarm(host, clock, 10)
        plain = (await host.create_session()).session.id
    (data / "wake-index.jsonl").unlink()
    async with alarm_host(
        clock, backend=JsonlBackend(data), wake_backend=JsonlWakeBackend(data)
    ) as host:
        index = host.lifecycle.index
        assert index is not None and index.rebuilt is True
        await until(index.ready.is_set)
        assert index.entries() == {session_id: WakeEntry(at)}
        assert plain not in index.entries()
    assert JsonlWakeBackend(data).path.read_text().count("\n") == 2  # header + one entry


async def test_descriptors_stay_bounded_by_live_sessions_when_many_are_opened(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    data = tmp_path / "data"

    def descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    async with alarm_host(
        clock, backend=JsonlBackend(data), wake_backend=JsonlWakeBackend(data), idle_seconds=5
    ) as host:
        before = descriptors()
        for _ in range(3):
            for _ in range(100):
                agent = await host.create_session()
                host.live.append(agent.session, "test/tick", {})
                await host.live.flush(agent.session)
            assert descriptors() >= before + 90  # each live Session holds its log open
            clock.advance(5)
            await until(lambda: not host.agents())
            assert descriptors() <= before + 5
        assert len(await host.catalogue.list()) == 300


async def test_a_close_whose_log_cannot_be_read_either_stays_dirty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({})
    async with alarm_host(clock, wake_backend=wake) as host:
        session_id, _ = await make_alarm(host, clock, 30)

        async def unreadable(session_id: str) -> int | None:
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(host, "session_wake_at", unreadable)
        agent = host.agent(session_id)
        assert agent is not None
        await host.lifecycle.went_cold(agent.session, stored=False)
        assert wake.entries is not None and wake.entries[session_id].dirty


async def test_a_close_the_index_cannot_record_is_logged_and_still_completes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({})
    async with alarm_host(clock, wake_backend=wake) as host:
        session_id, at = await make_alarm(host, clock, 30)
        wake.fail_writes = wake.fail_discard = True
        await host.close_session(session_id)
        assert host.live.find(session_id) is None
        assert "went cold but" in caplog.text
        index = host.lifecycle.index
        assert index is not None
        assert index.armed_at(session_id) == at - index.lead_ms  # memory is right
        wake.fail_writes = wake.fail_discard = False


async def test_without_hibernation_a_hold_is_a_no_op_and_a_vanished_session_is_gone() -> None:
    clock = FakeClock()
    async with alarm_host(clock, wake_backend=MemoryWakeBackend({})) as host:
        release = host.lifecycle.hold("anything")
        release()
        index = host.lifecycle.index
        assert index is not None
        port = index._host
        with pytest.raises(Exception, match="no session"):
            await port.resume("missing")
        with pytest.raises(Exception, match="no session"):
            await port.derive("missing")


async def test_a_go_live_the_index_cannot_record_fails_and_the_session_stays_armed() -> None:
    clock = FakeClock()
    wake = MemoryWakeBackend({})
    async with alarm_host(clock, wake_backend=wake) as host:
        session_id, at = await make_alarm(host, clock, 30)
        await host.close_session(session_id)
        wake.fail_writes = wake.fail_discard = True
        index = host.lifecycle.index
        assert index is not None
        with pytest.raises(Exception, match="could not be removed either"):
            await host.resume(session_id)
        assert host.agent(session_id) is None and host.live.find(session_id) is None
        assert index.armed_at(session_id) == at - index.lead_ms  # still woken in time
        wake.fail_writes = wake.fail_discard = False
        clock.advance(30)
        await until(lambda: host.agent(session_id) is not None)


async def test_a_storm_is_woken_ahead_stays_live_until_its_time_and_rings_only_then() -> None:
    clock, plugin = FakeClock(), AlarmPlugin()
    async with alarm_host(
        clock, wake_backend=MemoryWakeBackend({}), idle_seconds=5, plugin=plugin
    ) as host:
        index, hibernator = host.lifecycle.index, host.lifecycle.hibernator
        assert index is not None and hibernator is not None
        index.ahead = WakeAhead(prior_seconds=20, margin=1)  # a slow host: 20 s per resume
        alarms = [await make_alarm(host, clock, 300) for _ in range(3)]
        at = alarms[0][1]
        for session_id, _ in alarms:
            await host.close_session(session_id)
        # Each is armed with its second's count so far: the last one 2 × 20 s + the lead.
        assert index.lead_for(at) == index.lead_ms + 40_000
        assert index.armed_at(alarms[2][0]) == at - index.lead_ms - 40_000
        clock.advance(300 - 42)
        await until(lambda: host.agent(alarms[2][0]) is not None)
        # That resume took no time on this clock: the others are planned again with it.
        await until(lambda: index.armed_at(alarms[1][0]) == at - index.lead_ms)
        clock.advance(20)  # idle for four times `idle_seconds`, yet its time is ahead
        await until(lambda: clock.sleeping >= 1)
        early = host.agent(alarms[2][0])
        assert early is not None and rung(early.session) == []
        assert hibernator.hibernated == 0  # not the one woken ahead, idle as it is
        clock.advance(20)
        await until(lambda: all(host.agent(session_id) is not None for session_id, _ in alarms))
        assert rung(early.session) == []  # live early, nothing rung early
        clock.advance(2)  # the time itself: every owner rings
        for session_id, _ in alarms:
            agent = host.agent(session_id)
            assert agent is not None
            await until(lambda agent=agent: rung(agent.session) == [at])  # type: ignore[misc]
