"""The Host's attention: alerts found at the commit point, kept, counted and told to watchers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.attention.alert import Alert
from dsh.attention.backend import MemoryAttentionBackend
from dsh.host.attention import Frame
from dsh.host.errors import HostClosed
from dsh.host.host import Host
from dsh.persistence.errors import StorageError
from dsh.persistence.jsonl import JsonlBackend
from dsh.persistence.memory import MemoryBackend
from dsh.session.errors import FlushError
from dsh.session.log import Session
from dsh.testing import FakeClock, FakeModel
from dsh.testing.faults import FaultyBackend
from tests.host.fixtures.plugins import Alerter
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


class Watcher:
    def __init__(self) -> None:
        self.frames: list[Frame] = []

    def __call__(self, frame: Frame) -> None:
        self.frames.append(frame)

    def kinds(self) -> list[object]:
        return [frame["kind"] for frame in self.frames]

    def alerts(self) -> list[tuple[object, object]]:
        return [(f["sessionId"], f["seq"]) for f in self.frames if f["kind"] == "alert"]


class FlakyAttention(MemoryAttentionBackend):
    """A memory store whose `record` fails while `failing`."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = False
        self.refused = 0

    async def record(self, session_id: str, alerts: Sequence[Alert], checked: int) -> int:
        if self.failing:
            self.refused += 1
            raise StorageError("the attention store is down")
        return await super().record(session_id, alerts, checked)


def host_on(backend: Any, attention: Any = None, clock: FakeClock | None = None) -> Host:
    host = Host(backend=backend, model=FakeModel(), clock=clock or FakeClock(), attention=attention)
    host.pm.register(Alerter(), name="alerter")
    return host


@pytest.fixture
async def host() -> AsyncIterator[Host]:
    async with host_on(MemoryBackend()) as host:
        yield host


async def ring(host: Host, session: Session, title: str = "stretch") -> int:
    event = host.live.append(session, "note/ring", title)
    assert await host.live.flush(session)
    await host.attention.settled()
    return event.seq


async def test_a_watcher_hears_hello_then_each_alert_and_the_new_count(host: Host) -> None:
    agent = await host.create_session()
    watcher = Watcher()
    stop = await host.attention.watch(watcher)
    seq = await ring(host, agent.session)
    assert watcher.frames == [
        {"kind": "hello", "unread": {}},
        {
            "kind": "alert",
            "sessionId": agent.session.id,
            "seq": seq,
            "title": "stretch",
            "body": f"ring {seq}",
            "tag": f"ring-{seq}",
            "at": agent.session.events[seq].time,
        },
        {"kind": "unread", "sessionId": agent.session.id, "count": 1},
    ]
    stop()
    await ring(host, agent.session)
    assert len(watcher.frames) == 3
    assert await host.attention.unread() == {agent.session.id: 2}


async def test_an_alert_waits_for_its_flush(host: Host) -> None:
    agent = await host.create_session()
    watcher = Watcher()
    await host.attention.watch(watcher)
    host.live.append(agent.session, "note/ring", "stretch")
    await host.attention.settled()
    assert watcher.kinds() == ["hello"] and await host.attention.unread() == {}
    assert await host.live.flush(agent.session)
    await host.attention.settled()
    assert watcher.kinds() == ["hello", "alert", "unread"]


async def test_no_alert_before_storage_answers_and_exactly_one_after_a_lost_answer() -> None:
    faulty = FaultyBackend(MemoryBackend())
    async with host_on(faulty) as host:
        agent = await host.create_session()
        watcher = Watcher()
        await host.attention.watch(watcher)
        hold = faulty.hold("append")
        host.live.append(agent.session, "note/ring", "stretch")
        async with anyio.create_task_group() as group:
            group.start_soon(host.live.flush, agent.session)
            with anyio.fail_after(WAIT):
                await hold.entered.wait()
            await host.attention.settled()
            assert watcher.kinds() == ["hello"]  # the write is under way: no alert yet
            hold.release()
        await host.attention.settled()
        assert watcher.kinds() == ["hello", "alert", "unread"]
        # The next write lands but its acknowledgement is lost: the flush fails, no alert.
        faulty.fail("append", after_write=True)
        host.live.append(agent.session, "note/ring", "again")
        with pytest.raises(FlushError):
            await host.live.flush(agent.session)
        await host.attention.settled()
        assert watcher.kinds() == ["hello", "alert", "unread"]
        assert await host.live.flush(agent.session)  # stored after all: announced once
        assert await host.live.flush(agent.session)
        await host.attention.settled()
        assert watcher.kinds() == ["hello", "alert", "unread", "alert", "unread"]
        assert await host.attention.unread() == {agent.session.id: 2}


async def test_only_plugin_events_are_asked_about_and_bad_answers_are_skipped(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    agent = await host.create_session()
    with caplog.at_level(logging.WARNING):
        host.live.append(agent.session, "note/odd", {})
        host.live.append(agent.session, "note/raise", {})
        await ring(host, agent.session)
    assert await host.attention.unread() == {agent.session.id: 1}
    assert "not an alert" in caplog.text and "the alerter broke" in caplog.text


async def test_reading_moves_the_count_and_every_watcher_hears_it(host: Host) -> None:
    agent = await host.create_session()
    first = await ring(host, agent.session, "one")
    await ring(host, agent.session, "two")
    watcher = Watcher()
    await host.attention.watch(watcher)
    assert watcher.frames == [{"kind": "hello", "unread": {agent.session.id: 2}}]
    assert await host.attention.read(agent.session.id, first) == 1
    assert await host.attention.read(agent.session.id, first) == 1  # the same again: no frame
    assert await host.attention.read(agent.session.id, len(agent.session)) == 0
    assert watcher.frames[1:] == [
        {"kind": "unread", "sessionId": agent.session.id, "count": 1},
        {"kind": "unread", "sessionId": agent.session.id, "count": 0},
    ]


async def test_a_watcher_that_reconnects_gets_the_alerts_since_its_last_one(host: Host) -> None:
    agent = await host.create_session()
    await ring(host, agent.session, "one")
    at = agent.session.events[-1].time
    assert isinstance(host.clock, FakeClock)
    host.clock.advance(5)
    second = await ring(host, agent.session, "two")
    watcher = Watcher()
    await host.attention.watch(watcher, since=at)
    assert watcher.kinds() == ["hello", "alert"] and watcher.alerts() == [
        (agent.session.id, second)
    ]


async def test_a_fork_never_repeats_its_parents_alerts(host: Host) -> None:
    agent = await host.create_session()
    await ring(host, agent.session)
    child = await host.sessions.fork(agent.session.id, None)
    await host.attention.settled()
    assert await host.attention.unread() == {agent.session.id: 1}
    seq = await ring(host, child.session, "the child's own")
    assert await host.attention.unread() == {agent.session.id: 1, child.session.id: 1}
    assert seq >= child.session.fold_start


async def test_a_deleted_session_loses_its_alerts_and_watchers_hear_zero(host: Host) -> None:
    agent = await host.create_session()
    await ring(host, agent.session)
    watcher = Watcher()
    await host.attention.watch(watcher)
    await host.sessions.delete(agent.session.id)
    assert await host.attention.unread() == {}
    assert watcher.frames[-1] == {"kind": "unread", "sessionId": agent.session.id, "count": 0}


async def test_unread_counts_survive_a_restart(tmp_path: Path) -> None:
    async with host_on(JsonlBackend(tmp_path)) as host:
        agent = await host.create_session()
        await ring(host, agent.session)
        await ring(host, agent.session)
        session_id = agent.session.id
    assert (tmp_path / "attention.jsonl").exists()
    async with host_on(JsonlBackend(tmp_path)) as host:
        assert await host.attention.unread() == {session_id: 2}
        await host.resume(session_id)
        await host.attention.settled()
        assert await host.attention.unread() == {session_id: 2}  # never announced twice


async def next_retry(clock: FakeClock) -> None:
    with anyio.fail_after(WAIT):
        while not clock.sleeping:
            await anyio.lowlevel.checkpoint()
    clock.advance(max(clock.sleeps))


async def test_an_alert_the_store_refused_is_kept_once_it_recovers() -> None:
    attention = FlakyAttention()
    clock = FakeClock()
    async with host_on(MemoryBackend(), attention, clock) as host:
        agent = await host.create_session()
        await host.attention.settled()
        watcher = Watcher()
        await host.attention.watch(watcher)
        attention.failing = True
        await ring(host, agent.session)
        assert attention.refused == 1 and watcher.kinds() == ["hello"]
        await next_retry(clock)  # refused again
        with anyio.fail_after(WAIT):
            while attention.refused < 2:
                await anyio.lowlevel.checkpoint()
        attention.failing = False
        await next_retry(clock)
        with anyio.fail_after(WAIT):
            while "alert" not in watcher.kinds():
                await anyio.lowlevel.checkpoint()
        await host.attention.settled()
        assert watcher.kinds() == ["hello", "alert", "unread"]


async def test_an_alert_not_kept_before_the_host_stopped_is_found_when_it_resumes() -> None:
    attention = FlakyAttention()
    backend = MemoryBackend()
    async with host_on(backend, attention) as host:
        agent = await host.create_session()
        await host.attention.settled()
        attention.failing = True  # as if the host died between the flush and the record
        seq = await ring(host, agent.session)
        session_id = agent.session.id
    attention.failing = False
    async with host_on(backend, attention) as host:
        watcher = Watcher()
        await host.attention.watch(watcher)
        await host.resume(session_id)
        await host.attention.settled()
        assert watcher.alerts() == [(session_id, seq)]
        assert await host.attention.unread() == {session_id: 1}


async def test_a_session_from_before_attention_existed_starts_with_nothing_unread() -> None:
    backend = MemoryBackend()
    async with host_on(backend) as host:
        agent = await host.create_session()
        await ring(host, agent.session)
        session_id = agent.session.id
    async with host_on(backend, MemoryAttentionBackend()) as host:  # a store that never saw it
        await host.resume(session_id)
        await host.attention.settled()
        assert await host.attention.unread() == {}


async def test_a_closed_host_refuses_reads() -> None:
    host = host_on(MemoryBackend())
    with pytest.raises(HostClosed):
        await host.attention.read("aaaaaaaaaaaaaaaa", 1)
    async with host:
        pass
    with pytest.raises(HostClosed):
        await host.attention.settled()


# -- the feed plugins subscribe to (dsh.AlertFeed) ------------------------------------


class Sink:
    """Keeps what it is handed and, at each call, how far the store had checked."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.batches: list[list[Alert]] = []
        self.checked_then: list[int | None] = []
        self.failure: Exception | None = None

    async def __call__(self, alerts: Sequence[Alert]) -> None:
        self.checked_then.append(await self.host.attention.backend.checked(alerts[0].session_id))
        if self.failure is not None:
            raise self.failure
        self.batches.append(list(alerts))


async def test_a_sink_is_handed_new_alerts_before_they_are_recorded(host: Host) -> None:
    agent = await host.create_session()
    await host.attention.settled()
    sink = Sink(host)
    scope = host.scope.child("test sink")
    host.attention.subscribe(sink, scope=scope)
    before = await host.attention.backend.checked(agent.session.id)
    seq = await ring(host, agent.session)
    assert [[(a.session_id, a.seq, a.title) for a in b] for b in sink.batches] == [
        [(agent.session.id, seq, "stretch")]
    ]
    assert sink.checked_then == [before] and before is not None and before <= seq
    assert await host.attention.backend.checked(agent.session.id) == seq + 1
    await scope.aclose()
    await ring(host, agent.session)
    assert len(sink.batches) == 1  # the subscription ended with its scope


async def test_a_sink_that_cannot_store_has_the_batch_handed_over_again_later() -> None:
    clock = FakeClock()
    async with host_on(MemoryBackend(), clock=clock) as host:
        agent = await host.create_session()
        await host.attention.settled()
        sink = Sink(host)
        host.attention.subscribe(sink, scope=host.scope)
        sink.failure = StorageError("the outbox is full")
        seq = await ring(host, agent.session)
        assert sink.batches == [] and await host.attention.unread() == {}
        sink.failure = None
        await next_retry(clock)
        with anyio.fail_after(WAIT):
            while not sink.batches:
                await anyio.lowlevel.checkpoint()
        await host.attention.settled()
        assert [a.seq for a in sink.batches[0]] == [seq]
        assert await host.attention.unread() == {agent.session.id: 1}


async def test_a_sink_that_breaks_is_logged_and_the_alert_is_recorded_anyway(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    agent = await host.create_session()
    sink = Sink(host)
    sink.failure = RuntimeError("a bug in the sink")
    host.attention.subscribe(sink, scope=host.scope)
    with caplog.at_level(logging.ERROR, logger="dsh.host.attention"):
        await ring(host, agent.session)
    assert "an alert sink" in caplog.text and "a bug in the sink" in caplog.text
    assert await host.attention.unread() == {agent.session.id: 1}


async def test_an_alert_found_again_after_a_crash_is_handed_over_again() -> None:
    attention = FlakyAttention()
    backend = MemoryBackend()
    async with host_on(backend, attention) as host:
        agent = await host.create_session()
        await host.attention.settled()
        sink = Sink(host)
        host.attention.subscribe(sink, scope=host.scope)
        attention.failing = True  # the host dies after the sink took it, before the record
        seq = await ring(host, agent.session)
        session_id = agent.session.id
        assert [a.seq for a in sink.batches[0]] == [seq]
    attention.failing = False
    async with host_on(backend, attention) as host:
        again = Sink(host)
        host.attention.subscribe(again, scope=host.scope)
        await host.resume(session_id)
        await host.attention.settled()
        assert [(a.session_id, a.seq) for a in again.batches[0]] == [(session_id, seq)]


async def test_alerts_are_background_work_they_wait_while_the_host_does_urgent_work() -> None:
    async with host_on(MemoryBackend()) as host:
        host.background.patience = 3600
        agent = await host.create_session()
        watcher = Watcher()
        await host.attention.watch(watcher)
        with host.background.urgent():  # a storm's dispatches being stored
            host.live.append(agent.session, "note/ring", "stretch")
            assert await host.live.flush(agent.session)
            for _ in range(50):
                await anyio.lowlevel.checkpoint()
            assert watcher.kinds() == ["hello"]
        await host.attention.settled()
        assert watcher.kinds() == ["hello", "alert", "unread"]


async def test_a_flush_with_nothing_new_to_store_starts_no_derivation(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await host.create_session()
    await ring(host, agent.session)
    derived: list[int] = []
    real = host.attention._derive

    async def derive(session: Session, through: int, attempt: int) -> None:
        derived.append(through)
        await real(session, through, attempt)

    monkeypatch.setattr(host.attention, "_derive", derive)
    # A reminder's preflight: a barrier with nothing appended since the last one.
    assert await host.live.flush(agent.session)
    await host.attention.settled()
    assert derived == []
    seq = await ring(host, agent.session)
    assert derived == [seq + 1]
