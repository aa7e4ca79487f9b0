from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh.persistence import (
    Backend,
    Backoff,
    JsonlBackend,
    LogMark,
    MemoryBackend,
    PersistenceCoordinator,
)
from dsh.persistence.errors import (
    CoordinatorClosed,
    DivergedLog,
    LeaseLost,
    SessionExists,
    StorageError,
    StorageRefused,
)
from dsh.session.errors import FlushError, FlushRefused, InvalidSessionId, SessionClosed
from dsh.session.event import SessionEvent
from dsh.session.header import SessionHeader
from dsh.session.live import LiveSessions, Observation, SessionFlushed
from dsh.session.log import Session
from dsh.session.types import END_SEED
from dsh.testing import FakeClock, FaultyBackend, Operation
from tests.support.deadlines import WAIT
from tests.support.fulldisk import FullDisk

from .contract import events, header

pytestmark = pytest.mark.anyio

Kind = Literal["new", "fork", "resume"]


@asynccontextmanager
async def running(backend: Backend) -> AsyncIterator[tuple[LiveSessions, PersistenceCoordinator]]:
    live = LiveSessions(FakeClock())
    async with anyio.create_task_group() as group:
        coordinator = PersistenceCoordinator(live, backend, group, clock=live.clock)
        try:
            yield live, coordinator
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await coordinator.aclose()
                finally:
                    await backend.aclose()


@pytest.fixture(params=["memory", "jsonl"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> FaultyBackend:
    if request.param == "jsonl":
        return FaultyBackend.jsonl(tmp_path)
    return FaultyBackend(MemoryBackend())


@pytest.fixture
def memory() -> FaultyBackend:
    return FaultyBackend(MemoryBackend())


def add(live: LiveSessions, session: Session, count: int = 1) -> None:
    for _ in range(count):
        live.append(session, "message/user", {"text": "hi", "n": len(session)})


async def eventually(check: Callable[[], Awaitable[bool] | bool], what: str) -> None:
    """Let other tasks (and worker threads) run until `check()` holds; fail after 5 s."""
    with anyio.fail_after(WAIT):
        while True:
            result = check()
            if not isinstance(result, bool):
                result = await result
            if result:
                return
            await anyio.lowlevel.checkpoint()


async def settle() -> None:
    for _ in range(20):
        await anyio.lowlevel.checkpoint()


async def assert_stored_exactly(backend: Backend, session: Session) -> None:
    """Storage holds exactly `session`: same header identity, every event, nothing more."""
    stored = await backend.inspect(session.id)
    assert stored is not None
    assert stored.header.identity_equals(session.header)
    assert [event.to_json() for event in stored.events] == [e.to_json() for e in session.events]
    assert await backend.cursor(session.id) == len(session)


def observe(live: LiveSessions) -> list[int]:
    through: list[int] = []

    def record(item: Observation) -> None:
        if isinstance(item, SessionFlushed):
            through.append(item.through)

    live.observe(record)
    return through


async def make_session(kind: Kind, backend: FaultyBackend) -> tuple[Session, int]:
    """A live-to-be Session of `kind` and its seed_end; a resumed one is stored first."""
    if kind == "new":
        return Session.new("s1", cwd="/home/me", created_at=5), 0
    if kind == "fork":
        parent = Session(header("parent"), events(0, 4))
        child = Session.fork(parent.header, parent.events, "s1", at=3, created_at=9)
        assert child.header.seed_length is not None
        return child, child.header.seed_length
    await backend.inner.initialize(header("s1"), events(0, 3))
    stored = await backend.inner.inspect("s1")
    assert stored is not None
    return Session.resume(stored.header, stored.events, resumed_at=11), len(stored.events)


# -- the happy path ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["new", "fork", "resume"])
async def test_an_attached_session_is_written_eagerly_without_a_flush(
    backend: FaultyBackend, kind: Kind
) -> None:
    session, seed_end = await make_session(kind, backend)
    async with running(backend) as (live, coordinator):
        live.open(session)
        coordinator.attach(session, seed_end=seed_end)
        add(live, session, 3)
        await eventually(lambda: _cursor_is(backend.inner, "s1", len(session)), "eager write")
        await assert_stored_exactly(backend.inner, session)


async def _cursor_is(backend: Backend, session_id: str, length: int) -> bool:
    return await backend.cursor(session_id) == length


class Recording(MemoryBackend):
    """Remembers how many events each `initialize` created a Session with."""

    def __init__(self) -> None:
        super().__init__()
        self.created: list[int] = []

    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        self.created.append(len(events))
        await super().initialize(header, events)


async def test_a_fork_is_created_with_exactly_its_seed_then_appended() -> None:
    recording = Recording()
    backend = FaultyBackend(recording)
    session, seed_end = await make_session("fork", backend)
    async with running(backend) as (live, coordinator):
        live.open(session)
        coordinator.attach(session, seed_end=seed_end)
        add(live, session, 2)
        assert await live.flush(session) is True
        assert recording.created == [4]
        stored = await recording.inspect("s1")
        assert stored is not None
        assert stored.events[3].type == END_SEED
        await assert_stored_exactly(recording, session)


async def resumed_with_its_mark(backend: FaultyBackend) -> tuple[Session, LogMark]:
    """A Session resumed from three stored events, and the mark taken before the read."""
    await backend.inner.initialize(header("s1"), events(0, 3))
    mark = await backend.inner.mark("s1")
    stored = await backend.inner.inspect("s1")
    assert mark is not None and stored is not None
    return Session.resume(stored.header, stored.events, resumed_at=11), mark


async def test_a_resume_with_its_stored_mark_writes_only_its_suffix_and_asks_nothing_else(
    backend: FaultyBackend,
) -> None:
    session, mark = await resumed_with_its_mark(backend)
    async with running(backend) as (live, coordinator):
        live.open(session)
        coordinator.attach(session, seed_end=3, stored=mark)
        assert coordinator.durable_length(session) == 3
        add(live, session, 2)
        assert await live.flush(session) is True
        await assert_stored_exactly(backend.inner, session)
    asked = ("initialize", "mark", "inspect", "read", "cursor")
    assert {name: backend.calls[name] for name in asked} == dict.fromkeys(asked, 0)
    assert backend.calls["append"] >= 1


async def test_a_resume_with_its_stored_mark_still_recovers_with_content(
    memory: FaultyBackend,
) -> None:
    session, mark = await resumed_with_its_mark(memory)
    async with running(memory) as (live, coordinator):
        live.open(session)
        coordinator.attach(session, seed_end=3, stored=mark)
        fault = memory.fail("append", after_write=True)
        add(live, session)
        await eventually(lambda: fault.fired == 1, "the eager append to land unacknowledged")
        assert await live.flush(session) is True  # reconciled: nothing written twice
        await assert_stored_exactly(memory.inner, session)


async def test_a_stored_mark_must_count_the_events_the_session_was_built_from(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session(header("s1"), events(0, 3))
        live.open(session)
        with pytest.raises(ValueError, match="counts 2 events, not the 3"):
            coordinator.attach(session, seed_end=3, stored=LogMark(2, None))
        assert not coordinator.is_attached(session)


async def test_flush_acknowledges_and_the_store_publishes_the_boundary(
    backend: FaultyBackend,
) -> None:
    async with running(backend) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        through = observe(live)
        add(live, session, 2)
        assert await live.flush(session) is True
        add(live, session, 1)
        assert await live.flush(session) is True
        assert through == [2, 3]
        await assert_stored_exactly(backend.inner, session)


async def test_an_empty_new_session_is_acknowledged_only_once_it_is_stored(
    memory: FaultyBackend,
) -> None:
    hold = memory.hold("initialize")
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        results: list[bool] = []
        async with anyio.create_task_group() as group:

            async def flush() -> None:
                results.append(await live.flush(session))

            group.start_soon(flush)
            with anyio.fail_after(WAIT):
                await hold.entered.wait()
            await settle()
            assert results == []
            hold.release()
        assert results == [True]
        assert await memory.inner.cursor("s1") == 0


async def test_everything_pending_is_written_as_one_batch(memory: FaultyBackend) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        hold = memory.hold("append")
        add(live, session)
        with anyio.fail_after(WAIT):
            await hold.entered.wait()
        add(live, session, 9)
        hold.release()
        assert await live.flush(session) is True
        assert memory.calls["append"] == 2
        await assert_stored_exactly(memory.inner, session)


async def test_flush_is_true_only_once_its_boundary_is_stored_while_appends_race(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        through = observe(live)
        hold = memory.hold("append")
        add(live, session, 2)
        with anyio.fail_after(WAIT):
            await hold.entered.wait()
        stored_when_acknowledged: dict[int, int | None] = {}

        async def flush(boundary: int) -> None:
            assert await live.flush(session) is True
            stored_when_acknowledged[boundary] = await memory.inner.cursor("s1")

        async with anyio.create_task_group() as group:
            group.start_soon(flush, 2)
            await settle()
            add(live, session, 3)  # appended while the first flush waits
            group.start_soon(flush, 5)
            await settle()
            assert stored_when_acknowledged == {}
            add(live, session, 1)  # past every flush's boundary
            hold.release()
        assert set(stored_when_acknowledged) == {2, 5}
        for boundary, stored in stored_when_acknowledged.items():
            assert stored is not None and stored >= boundary
        assert sorted(through) == [2, 5]
        assert await live.flush(session) is True
        await assert_stored_exactly(memory.inner, session)


# -- failures and recovery -------------------------------------------------------------

RECOVERY = [
    ("new", "initialize", False),
    ("new", "initialize", True),
    ("new", "append", False),
    ("new", "append", True),
    ("fork", "initialize", False),
    ("fork", "initialize", True),
    ("fork", "append", False),
    ("fork", "append", True),
    ("resume", "initialize", False),
    ("resume", "inspect", False),
    ("resume", "inspect", True),
    ("resume", "append", False),
    ("resume", "append", True),
]


@pytest.mark.parametrize(("kind", "operation", "after_write"), RECOVERY)
async def test_one_failed_first_write_is_recovered_from_the_real_cursor(
    backend: FaultyBackend,
    kind: Kind,
    operation: Literal["initialize", "append", "inspect"],
    after_write: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    session, seed_end = await make_session(kind, backend)
    fault = backend.fail(operation, after_write=after_write)
    async with running(backend) as (live, coordinator):
        live.open(session)
        with caplog.at_level(logging.WARNING, logger="dsh.persistence.coordinator"):
            coordinator.attach(session, seed_end=seed_end)
            add(live, session, 2)
            await eventually(lambda: fault.fired == 1, "the eager write to fail")
        assert "s1: persistence write failed" in caplog.text
        add(live, session, 1)
        assert await live.flush(session) is True
        await assert_stored_exactly(backend.inner, session)


# Faults that every retry hits again (with after_write=True, a retry of a write
# that landed finds it stored and rightly acknowledges, so only reads qualify).
PERSISTENT = [case for case in RECOVERY if not case[2] or case[1] == "inspect"]


@pytest.mark.parametrize(("kind", "operation", "after_write"), PERSISTENT)
async def test_a_flush_that_hits_a_fault_raises_and_the_next_one_recovers(
    backend: FaultyBackend,
    kind: Kind,
    operation: Literal["initialize", "append", "inspect"],
    after_write: bool,
) -> None:
    session, seed_end = await make_session(kind, backend)
    async with running(backend) as (live, coordinator):
        live.open(session)
        through = observe(live)
        backend.fail(operation, after_write=after_write, times=None)
        coordinator.attach(session, seed_end=seed_end)
        add(live, session, 2)
        with pytest.raises(FlushError) as info:
            await live.flush(session)
        assert isinstance(info.value.errors[0], StorageError)
        assert "s1" in str(info.value)
        assert through == []
        backend.clear()
        assert await live.flush(session) is True
        assert through == [len(session)]
        await assert_stored_exactly(backend.inner, session)


@pytest.mark.parametrize("after_write", [False, True])
async def test_a_write_in_flight_that_fails_is_retried_by_the_flush_waiting_for_it(
    memory: FaultyBackend, after_write: bool
) -> None:
    """The writer's eager append meets a fault scripted before the faults stopped; a flush
    called meanwhile is the next flush of that failed batch: it retries it and succeeds."""
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        fault = memory.fail("append", after_write=after_write)
        hold = memory.hold("append", after_write=after_write)
        add(live, session, 2)
        with anyio.fail_after(WAIT):
            await hold.entered.wait()  # in flight, its fault already chosen
        results: list[bool] = []

        async def flush() -> None:
            results.append(await live.flush(session))

        async with anyio.create_task_group() as group:
            group.start_soon(flush)
            await settle()
            assert results == []  # waiting for the write in flight
            memory.clear()  # the faults stop; the held append goes on, and fails
        assert results == [True] and fault.fired == 1
        # A write that landed before its failure is found by reading back, not re-sent.
        assert memory.calls["append"] == (1 if after_write else 2)
        await assert_stored_exactly(memory.inner, session)


async def test_a_flush_whose_own_retry_fails_too_raises(memory: FaultyBackend) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        memory.fail("append", times=None)
        hold = memory.hold("append")
        add(live, session, 2)
        with anyio.fail_after(WAIT):
            await hold.entered.wait()
        errors: list[FlushError] = []

        async def flush() -> None:
            with pytest.raises(FlushError) as info:
                await live.flush(session)
            errors.append(info.value)

        async with anyio.create_task_group() as group:
            group.start_soon(flush)
            await settle()
            hold.release()  # the write in flight fails, then the flush's own retry does
        assert memory.calls["append"] == 2
        assert "events 0–1 are not confirmed stored" in str(errors[0])
        assert "append call #2 failed" in str(errors[0])
        memory.clear()
        assert await live.flush(session) is True


async def test_after_a_failure_nothing_is_written_until_the_next_flush(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        fault = memory.fail("append")
        add(live, session)
        await eventually(lambda: fault.fired == 1, "the eager append to fail")
        calls = memory.calls.copy()
        add(live, session, 3)
        await settle()
        assert memory.calls == calls
        assert await memory.inner.cursor("s1") == 0
        assert await live.flush(session) is True
        await assert_stored_exactly(memory.inner, session)


async def test_a_different_log_under_the_same_id_is_never_extended(
    memory: FaultyBackend,
) -> None:
    await memory.inner.initialize(header("s1", createdAt=1), events(0, 2))
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/home/me", created_at=2)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        add(live, session, 3)
        with pytest.raises(FlushError) as info:
            await live.flush(session)
        assert isinstance(info.value.errors[0].__cause__, DivergedLog)
        assert "different log" in str(info.value)
        with pytest.raises(StorageError, match=r"detached with events \[0, 3\) not stored"):
            await coordinator.aclose()
    stored = await memory.inner.inspect("s1")
    assert stored is not None
    assert stored.header.created_at == 1
    assert stored.events == tuple(events(0, 2))


@pytest.mark.parametrize("difference", ["longer", "other-events"])
async def test_a_stored_log_that_is_not_a_prefix_is_refused(
    memory: FaultyBackend, difference: str
) -> None:
    stored_events = events(0, 6) if difference == "longer" else events(0, 3, other=True)
    await memory.inner.initialize(header("s1"), stored_events)
    async with running(memory) as (live, coordinator):
        session = Session.resume(header("s1"), events(0, 3), resumed_at=1)
        live.open(session)
        coordinator.attach(session, seed_end=3)
        with pytest.raises(FlushError, match="different log"):
            await live.flush(session)
        with pytest.raises(StorageError, match="not stored"):
            await coordinator.aclose()
    assert await memory.inner.cursor("s1") == len(stored_events)


async def test_storage_that_reports_an_existing_session_then_has_none_is_an_error(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        memory.fail("initialize", error=SessionExists("pretend"))
        coordinator.attach(session, seed_end=0)
        with pytest.raises(FlushError, match="then found nothing"):
            await live.flush(session)
        assert await live.flush(session) is True
        await assert_stored_exactly(memory.inner, session)


async def test_storage_that_lost_a_created_session_gets_it_rewritten(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    backend = FaultyBackend.jsonl(tmp_path)
    async with running(backend) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        add(live, session, 2)
        assert await live.flush(session) is True
        (tmp_path / "sessions" / "s1.jsonl").unlink()
        fault = backend.fail("append")
        add(live, session)
        await eventually(lambda: fault.fired == 1, "the eager append to fail")
        with caplog.at_level(logging.WARNING, logger="dsh.persistence.coordinator"):
            assert await live.flush(session) is True
        assert "storage lost confirmed events (holds None of 2)" in caplog.text
        await assert_stored_exactly(backend.inner, session)


async def test_storage_holding_more_than_the_live_session_is_divergence(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        add(live, session, 2)
        assert await live.flush(session) is True
        await memory.inner.append("s1", events(2, 6))  # another writer
        add(live, session)
        with pytest.raises(FlushError):  # refused at the cursor (by the writer or this flush)
            await live.flush(session)
        with pytest.raises(FlushError, match="holds 6 events, more than the live 3"):
            await live.flush(session)
        with pytest.raises(StorageError, match="not stored"):
            await coordinator.aclose()


async def test_a_cancelled_flush_leaves_the_write_in_doubt_and_it_is_reconciled(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        fault = memory.fail("append")
        add(live, session)
        await eventually(lambda: fault.fired == 1, "the eager append to fail")
        # The writer is idle after the failure, so the next flush writes itself...
        hold = memory.hold("append", after_write=True)
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(live.flush, session)
                with anyio.fail_after(WAIT):
                    await hold.entered.wait()
                scope.cancel()  # ...and is cancelled after its append landed
        assert await live.flush(session) is True
        assert memory.calls["append"] == 2  # the landed append was reconciled, not re-sent
        await assert_stored_exactly(memory.inner, session)


async def test_a_flush_waiting_on_a_stopped_writer_raises(memory: FaultyBackend) -> None:
    live = LiveSessions(FakeClock())
    session = Session.new("s1", cwd="/", created_at=0)
    live.open(session)
    errors: list[FlushError] = []

    async def flush() -> None:
        with pytest.raises(FlushError) as info:
            await live.flush(session)
        errors.append(info.value)

    async with anyio.create_task_group() as outer, anyio.create_task_group() as group:
        coordinator = PersistenceCoordinator(live, memory, group)
        hold = memory.hold("initialize")
        coordinator.attach(session, seed_end=0)
        with anyio.fail_after(WAIT):
            await hold.entered.wait()
        outer.start_soon(flush)
        await settle()
        group.cancel_scope.cancel()
    assert "persistence stopped before its creation was stored" in str(errors[0])


# -- attaching and detaching ------------------------------------------------------------


async def test_attach_refuses_what_it_cannot_persist(memory: FaultyBackend) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        with pytest.raises(SessionClosed):
            coordinator.attach(session, seed_end=0)
        assert not coordinator.is_attached(session)
        live.open(session)
        for seed_end in (-1, 1):
            with pytest.raises(ValueError, match="seed_end"):
                coordinator.attach(session, seed_end=seed_end)
        coordinator.attach(session, seed_end=0)
        with pytest.raises(ValueError, match="already attached"):
            coordinator.attach(session, seed_end=0)
        assert coordinator.is_attached(session)


async def test_detach_writes_what_is_pending_then_stops_listening_and_releases(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        detach = coordinator.attach(session, seed_end=0)
        add(live, session, 3)
        await detach()
        await assert_stored_exactly(memory.inner, session)
        assert memory.calls["release"] == 1
        assert not coordinator.is_attached(session)
        calls = memory.calls.copy()
        add(live, session)
        await settle()
        assert memory.calls == calls
        assert await live.flush(session) is False  # no listener left
        await detach()
        assert memory.calls["release"] == 1


async def test_detach_reports_events_it_could_not_store(memory: FaultyBackend) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        detach = coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        memory.fail("append", times=None)
        add(live, session, 2)
        with pytest.raises(StorageError, match=r"s1 was detached with events \[0, 2\) not stored"):
            await detach()
        assert not coordinator.is_attached(session)
        assert memory.calls["release"] == 1


async def test_a_failing_release_is_logged_not_raised(
    memory: FaultyBackend, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        detach = coordinator.attach(session, seed_end=0)
        memory.fail("release")
        with caplog.at_level(logging.WARNING, logger="dsh.persistence.coordinator"):
            await detach()
        assert "s1: releasing storage failed" in caplog.text
        await assert_stored_exactly(memory.inner, session)


async def test_aclose_stores_every_attached_session_and_refuses_more(
    backend: FaultyBackend,
) -> None:
    async with running(backend) as (live, coordinator):
        sessions = [Session.new(f"s{n}", cwd="/", created_at=n) for n in range(3)]
        for session in sessions:
            live.open(session)
            coordinator.attach(session, seed_end=0)
            add(live, session, 2)
        await coordinator.aclose()
        for session in sessions:
            await assert_stored_exactly(backend.inner, session)
            assert not coordinator.is_attached(session)
        late = Session.new("late", cwd="/", created_at=0)
        live.open(late)
        with pytest.raises(CoordinatorClosed):
            coordinator.attach(late, seed_end=0)


@pytest.mark.parametrize("failing", [1, 2])
async def test_aclose_detaches_everything_then_raises_what_failed(
    memory: FaultyBackend, failing: int
) -> None:
    async with running(memory) as (live, coordinator):
        sessions = [Session.new(f"s{n}", cwd="/", created_at=n) for n in range(3)]
        for session in sessions:
            live.open(session)
            coordinator.attach(session, seed_end=0)
        for session in sessions:
            assert await live.flush(session) is True
        for session in sessions[:failing]:
            memory.fail("append", times=None, session_id=session.id)
        for session in sessions:
            add(live, session)
        with pytest.raises((StorageError, ExceptionGroup)) as info:
            await coordinator.aclose()
        if failing == 1:
            assert isinstance(info.value, StorageError)
        else:
            assert isinstance(info.value, ExceptionGroup)
            assert len(info.value.exceptions) == 2
        assert not any(coordinator.is_attached(session) for session in sessions)


async def test_read_validates_the_id_before_touching_storage(memory: FaultyBackend) -> None:
    await memory.inner.initialize(header("s1"), events(0, 2))
    async with running(memory) as (_, coordinator):
        with pytest.raises(InvalidSessionId):
            await coordinator.read("../s1")
        assert memory.calls["inspect"] == 0
        stored = await coordinator.read("s1")
        assert stored is not None
        assert stored.events == tuple(events(0, 2))
        assert await coordinator.read("s2") is None
        assert [summary.id for summary in await coordinator.list()] == ["s1"]


async def test_a_resumed_jsonl_session_continues_its_file_after_a_torn_tail(
    tmp_path: Path,
) -> None:
    first = JsonlBackend(tmp_path)
    await first.initialize(header("s1"), events(0, 3))
    await first.aclose()
    with (tmp_path / "sessions" / "s1.jsonl").open("ab") as file:
        file.write(b'{"seq":3,"ty')
    backend = FaultyBackend(JsonlBackend(tmp_path))
    async with running(backend) as (live, coordinator):
        stored = await coordinator.read("s1")
        assert stored is not None
        assert stored.torn_tail
        session = Session.resume(stored.header, stored.events, resumed_at=1)
        live.open(session)
        coordinator.attach(session, seed_end=len(stored.events))
        add(live, session, 2)
        assert await live.flush(session) is True
        await assert_stored_exactly(JsonlBackend(tmp_path), session)


async def test_a_flush_returns_at_its_boundary_and_leaves_later_events_to_the_writer(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        fault = memory.fail("append")
        add(live, session)
        await eventually(lambda: fault.fired == 1, "the eager append to fail")
        hold = memory.hold("append")  # the flush below writes this batch itself
        results: list[bool] = []
        async with anyio.create_task_group() as group:

            async def flush() -> None:
                results.append(await live.flush(session))

            group.start_soon(flush)
            with anyio.fail_after(WAIT):
                await hold.entered.wait()
            add(live, session, 2)  # past the flush's boundary
            hold.release()
        assert results == [True]
        await eventually(lambda: _cursor_is(memory.inner, "s1", 3), "the writer to catch up")
        assert memory.calls["append"] == 3


FAULTS: dict[str, Operation] = {
    "initialize": "initialize",
    "append-fault": "append",
    "cursor": "cursor",
    "inspect": "inspect",
}
OPERATIONS = st.one_of(
    st.tuples(st.just("append"), st.integers(min_value=1, max_value=4)),
    st.tuples(st.just("flush"), st.just(0)),
    st.tuples(st.just("settle"), st.just(0)),
    st.tuples(
        st.sampled_from(sorted(FAULTS)),
        st.sampled_from([0, 1]),  # 1: the fault strikes after the write took effect
    ),
)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["new", "fork", "resume"]), script=st.lists(OPERATIONS, max_size=25))
def test_storage_is_always_a_prefix_and_every_true_flush_is_true(
    kind: Kind, script: list[tuple[str, int]]
) -> None:
    async def scenario() -> None:
        backend = FaultyBackend(MemoryBackend())
        session, seed_end = await make_session(kind, backend)

        async def storage_is_a_prefix() -> int:
            stored = await backend.inner.inspect("s1")
            if stored is None:
                return 0
            assert stored.header.identity_equals(session.header)
            assert stored.events == tuple(session.events[: len(stored.events)])
            return len(stored.events)

        async with running(backend) as (live, coordinator):
            live.open(session)
            coordinator.attach(session, seed_end=seed_end)
            for action, argument in script:
                if action == "append":
                    add(live, session, argument)
                elif action == "flush":
                    boundary = len(session)
                    try:
                        acknowledged = await live.flush(session)
                    except FlushError:
                        acknowledged = False
                    if acknowledged:
                        assert await storage_is_a_prefix() >= boundary
                elif action == "settle":
                    await settle()
                else:
                    backend.fail(FAULTS[action], after_write=bool(argument))
                await storage_is_a_prefix()
            backend.clear()
            # A write still in flight may yet meet a fault scripted before: the flush
            # retries it, so the first flush once faults stop succeeds.
            assert await live.flush(session) is True
            await assert_stored_exactly(backend.inner, session)

    anyio.run(scenario)


async def test_a_log_whose_creation_lost_its_directory_fsync_is_synced_before_adoption(
    tmp_path: Path,
) -> None:
    """The directory fsync is JSONL's durability step for a new file: a create that
    failed there must not later be acknowledged without syncing the directory."""
    trace: list[str] = []
    fail_directory = [True]

    def sync(fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        # Fail the directory fsync that follows the new file's own fsync.
        if kind == "dir" and fail_directory[0] and trace[-1:] == ["file"]:
            fail_directory[0] = False
            trace.append("dir failed")
            raise OSError(5, "injected EIO on the directory fsync")
        os.fsync(fd)
        trace.append(kind)

    live = LiveSessions()
    async with anyio.create_task_group() as group:
        coordinator = PersistenceCoordinator(live, JsonlBackend(tmp_path, sync=sync), group)
        session = Session.new("s1", cwd="/", created_at=1)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        with pytest.raises(FlushError):
            await live.flush(session)
        trace.append("retry")

        assert await live.flush(session) is True

        await coordinator.aclose()
    assert trace[: trace.index("retry")][-2:] == ["file", "dir failed"]
    assert "dir" in trace[trace.index("retry") :]


# -- retries, recovery by content, health ------------------------------------------------


async def until_sleeping(clock: FakeClock, count: int = 1) -> None:
    await eventually(lambda: clock.sleeping >= count, "the writer to wait before retrying")


async def test_after_a_failure_the_writer_retries_by_itself_with_growing_bounded_waits(
    memory: FaultyBackend, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(memory) as (live, coordinator):
        clock = live.clock
        assert isinstance(clock, FakeClock)
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        memory.fail("append", times=4)
        with caplog.at_level(logging.INFO, logger="dsh.persistence.coordinator"):
            add(live, session, 2)
            for _ in range(4):
                await until_sleeping(clock)
                clock.advance(clock.sleeps[-1])
            await eventually(lambda: _cursor_is(memory.inner, "s1", 2), "the retry to store it")
        assert clock.sleeps == [0.1, 0.2, 0.4, 0.8]
        messages = [record.getMessage() for record in caplog.records]
        assert len(messages) == 2  # once when the episode starts, once when it ends
        assert "s1: persistence write failed; retrying" in messages[0]
        assert "s1: stored again after 4 failed attempts" in messages[1]
        await assert_stored_exactly(memory.inner, session)


def test_the_backoff_doubles_up_to_its_cap() -> None:
    backoff = Backoff(first=0.1, factor=2, cap=5)
    assert [backoff.delay(n) for n in (0, 1, 5, 6, 100, 10_000)] == [0.1, 0.2, 3.2, 5, 5, 5]


async def test_a_session_with_unconfirmed_events_is_reported_until_they_are_stored(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        clock = live.clock
        assert isinstance(clock, FakeClock)
        healthy = Session.new("ok", cwd="/", created_at=0)
        failing = Session.new("s1", cwd="/", created_at=0)
        for session in (healthy, failing):
            live.open(session)
            coordinator.attach(session, seed_end=0)
            assert await live.flush(session) is True
        assert coordinator.unconfirmed() == []
        memory.fail("append", times=None, session_id="s1")
        add(live, failing, 3)
        add(live, healthy, 1)
        await until_sleeping(clock)
        [report] = coordinator.unconfirmed()
        assert (report.session_id, report.first, report.end, report.count) == ("s1", 0, 3, 3)
        assert report.attempts == 1 and "injected fault" in report.error
        memory.clear()
        clock.advance(clock.sleeps[-1])
        await eventually(lambda: coordinator.unconfirmed() == [], "the retry to store it")


async def test_an_unconfirmed_creation_counts_every_event(memory: FaultyBackend) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        memory.fail("initialize", times=None)
        coordinator.attach(session, seed_end=0)
        with pytest.raises(FlushError, match="storage did not confirm its creation"):
            await live.flush(session)
        [report] = coordinator.unconfirmed()
        assert (report.first, report.end) == (0, 0)
        add(live, session, 2)
        with pytest.raises(FlushError, match="its creation and events 0–1"):
            await live.flush(session)
        memory.clear()
        assert await live.flush(session) is True


async def test_recovery_never_acknowledges_an_event_another_writer_replaced(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        add(live, session, 2)
        assert await live.flush(session) is True
        fault = memory.fail("append")
        add(live, session)
        await eventually(lambda: fault.fired == 1, "the eager append to fail")
        # Another writer stores a different event at seq 2: the count now matches.
        impostor = SessionEvent(seq=2, type="message/user", time=0, data={"text": "not mine"})
        await memory.inner.append("s1", [impostor])
        with pytest.raises(FlushError) as info:
            await live.flush(session)
        assert isinstance(info.value.errors[0].__cause__, DivergedLog)
        assert "other events than the live ones in [2, 3)" in str(info.value)
        assert coordinator.durable_length(session) == 2
        assert coordinator.unconfirmed()[0].first == 2
        with pytest.raises(StorageError, match="not stored"):
            await coordinator.aclose()


async def test_a_log_replaced_behind_the_writer_is_compared_in_full(tmp_path: Path) -> None:
    backend = FaultyBackend.jsonl(tmp_path)
    async with running(backend) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        add(live, session, 3)
        assert await live.flush(session) is True
        path = tmp_path / "sessions" / "s1.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        lines[1] = lines[1].replace(b'"n":0', b'"n":9')  # an edit of a confirmed event
        replacement = tmp_path / "replacement"
        replacement.write_bytes(b"".join(lines))
        os.replace(replacement, path)
        add(live, session)
        with pytest.raises(FlushError):
            await live.flush(session)  # the writer notices the log changed
        with pytest.raises(FlushError, match=r"other events than the live ones in \[0, 3\)"):
            await live.flush(session)
        with pytest.raises(StorageError):
            await coordinator.aclose()


async def test_a_log_restored_unchanged_behind_the_writer_is_continued(tmp_path: Path) -> None:
    backend = FaultyBackend.jsonl(tmp_path)
    async with running(backend) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        add(live, session, 3)
        assert await live.flush(session) is True
        path = tmp_path / "sessions" / "s1.jsonl"
        copy = tmp_path / "copy"
        copy.write_bytes(path.read_bytes())
        os.replace(copy, path)  # the same content under a new inode
        add(live, session)
        with contextlib.suppress(FlushError):
            await live.flush(session)
        assert await live.flush(session) is True
        await assert_stored_exactly(backend.inner, session)


async def advance_until(clock: FakeClock, done: Callable[[], bool]) -> None:
    """Advance the fake clock past every pending sleep until `done()` holds."""
    while not done():
        await eventually(lambda: done() or clock.sleeping > 0, "a sleeper or the end")
        if not done():
            clock.advance(max(clock.sleeps[-2:]))


async def test_detaching_keeps_retrying_within_its_budget(memory: FaultyBackend) -> None:
    live = LiveSessions(FakeClock())
    clock = live.clock
    assert isinstance(clock, FakeClock)
    async with anyio.create_task_group() as group:
        coordinator = PersistenceCoordinator(
            live, memory, group, clock=clock, close_retry_seconds=1.0
        )
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        detach = coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        memory.fail("append", times=3)
        add(live, session, 2)
        outcomes: list[Exception | None] = []

        async def detach_and_keep(detach: Callable[[], Awaitable[None]]) -> None:
            try:
                await detach()
                outcomes.append(None)
            except StorageError as error:
                outcomes.append(error)

        async with anyio.create_task_group() as inner:
            inner.start_soon(detach_and_keep, detach)
            await advance_until(clock, lambda: len(outcomes) == 1)
        assert outcomes == [None]
        await assert_stored_exactly(memory.inner, session)

        other = Session.new("s2", cwd="/", created_at=0)
        live.open(other)
        detach = coordinator.attach(other, seed_end=0)
        assert await live.flush(other) is True
        memory.fail("append", times=None, session_id="s2")
        add(live, other)
        before = clock.elapsed
        async with anyio.create_task_group() as inner:
            inner.start_soon(detach_and_keep, detach)
            await advance_until(clock, lambda: len(outcomes) == 2)
        assert "s2 was detached with events [0, 1) not stored" in str(outcomes[1])
        assert clock.elapsed - before >= 1.0 - 1e-9
        await coordinator.aclose()


async def test_abandon_stops_a_session_without_writing_more(memory: FaultyBackend) -> None:
    async with running(memory) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        memory.fail("initialize", times=None)
        coordinator.attach(session, seed_end=0)
        with pytest.raises(FlushError):
            await live.flush(session)
        calls = memory.calls.copy()
        await coordinator.abandon(session)
        await coordinator.abandon(session)  # twice is harmless
        assert not coordinator.is_attached(session)
        assert memory.calls["initialize"] == calls["initialize"]
        assert memory.calls["release"] == calls["release"] + 1


async def test_a_full_disk_is_retried_until_space_returns_and_nothing_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FullDisk.open(tmp_path) as disk:
        disk.patch_writes(monkeypatch)
        backend = JsonlBackend(disk.directory)
        async with running(backend) as (live, coordinator):
            clock = live.clock
            assert isinstance(clock, FakeClock)
            session = Session.new("s1", cwd="/", created_at=0)
            live.open(session)
            coordinator.attach(session, seed_end=0)
            assert await live.flush(session) is True
            disk.fill()
            for _ in range(100):  # a real tmpfs may still fit a few lines in the last page
                add(live, session, 20)
                await eventually(
                    lambda: (
                        coordinator.unconfirmed() != []
                        or coordinator.durable_length(session) == len(session)
                    ),
                    "the batch to be stored or refused",
                )
                if coordinator.unconfirmed():
                    break
            [report] = coordinator.unconfirmed()
            assert "No space left on device" in report.error
            stored = await backend.inspect("s1")
            assert stored is not None and stored.torn_tail is False  # rolled back, no partial line
            assert stored.events == tuple(session.events[: len(stored.events)])
            disk.free()
            await advance_until(clock, lambda: coordinator.unconfirmed() == [])
            assert await live.flush(session) is True
            await assert_stored_exactly(backend, session)


class FencedOff(MemoryBackend):
    """Storage that refuses every append: another host owns the Session now."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        raise LeaseLost(f"session {session_id}: the lease is no longer valid")

    async def mark(self, session_id: str) -> LogMark | None:
        self.reads += 1
        return await super().mark(session_id)


async def test_a_lost_lease_is_never_retried_and_storage_is_not_asked_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = FencedOff()
    async with running(backend) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=1)
        live.open(session)
        detach = coordinator.attach(session, seed_end=0)
        assert await live.flush(session)
        add(live, session)
        with pytest.raises(FlushError, match="no longer valid"):
            await live.flush(session)
        reads = backend.reads
        live.clock.advance(60)  # type: ignore[attr-defined]  # no background retry
        await settle()
        with pytest.raises(FlushError, match="no longer valid"):
            await live.flush(session)
        assert backend.reads == reads
        assert [item.first for item in coordinator.unconfirmed()] == [0]
        with pytest.raises(StorageError, match=r"detached with events \[0, 1\) not stored"):
            await detach()
        assert await backend.cursor("s1") == 0
    assert caplog.text.count("writing stopped") == 1


async def test_idle_sessions_hold_no_writer_task_and_appends_are_still_written_eagerly(
    memory: FaultyBackend,
) -> None:
    async with running(memory) as (live, coordinator):
        sessions = [Session.new(f"s{n}", cwd="/", created_at=0) for n in range(5)]
        for session in sessions:
            live.open(session)
            coordinator.attach(session, seed_end=0)
        for session in sessions:
            assert await live.flush(session) is True
        await eventually(lambda: len(coordinator._tasks) == 0, "the writers to finish")
        # No task is left; an append starts a writer that stores it and ends. What
        # stays is the coordinator's one starter, however many Sessions appended.
        add(live, sessions[2], 3)
        await eventually(
            lambda: coordinator.durable_length(sessions[2]) == 3, "the eager write to land"
        )
        await eventually(lambda: len(coordinator._tasks) == 1, "the writer to end")
        stored = await memory.inner.inspect("s2")
        assert stored is not None and len(stored.events) == 3
        for session in sessions:
            add(live, session, 2)
        await eventually(
            lambda: all(coordinator.durable_length(s) == len(s) for s in sessions),
            "every eager write to land",
        )
        await eventually(lambda: len(coordinator._tasks) == 1, "the writers to end")


class WhoWrites(MemoryBackend):
    """Storage that notes the name of the task making each append."""

    def __init__(self) -> None:
        super().__init__()
        self.writers: list[str] = []

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        self.writers.append(anyio.get_current_task().name)
        await super().append(session_id, events)


async def test_a_flush_right_after_appends_writes_them_itself_and_no_writer_starts() -> None:
    backend = WhoWrites()
    async with running(backend) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        await settle()
        started: list[str | None] = []
        start_soon = coordinator._tasks.start_soon

        def recording(
            func: Callable[..., Awaitable[object]], *args: object, name: str | None = None
        ) -> anyio.CancelScope:
            started.append(name)
            return start_soon(func, *args, name=name)

        coordinator._tasks.start_soon = recording  # type: ignore[method-assign]
        for _ in range(3):
            add(live, session, 2)
            assert await live.flush(session) is True
        await settle()
        flusher = anyio.get_current_task().name
        assert backend.writers == [flusher] * 3
        assert "persistence writer s1" not in started
        # Appends nobody flushes are still written, by the Session's writer task.
        add(live, session, 2)
        await eventually(lambda: coordinator.durable_length(session) == 8, "the eager write")
        assert backend.writers[3:] == ["persistence writer s1"]
        assert started.count("persistence writer s1") == 1
        await assert_stored_exactly(backend, session)


async def test_an_append_once_the_writer_tasks_are_closed_starts_nothing() -> None:
    backend = WhoWrites()
    async with running(backend) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=0)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        assert await live.flush(session) is True
        await coordinator._tasks.aclose()  # what `aclose()` ends with
        add(live, session)
        await settle()
        assert len(coordinator._tasks) == 0
        assert backend.writers == []  # nothing was written eagerly
        assert await live.flush(session) is True  # a flush still writes, itself
        assert backend.writers == [anyio.get_current_task().name]


class Refusing(MemoryBackend):
    """Storage whose types cannot hold an event with `"poison"` in its data (as
    PostgreSQL's `text` cannot hold NUL): a batch holding one is refused whole."""

    def __init__(self) -> None:
        super().__init__()
        self.appends = 0

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        self.appends += 1
        for event in events:
            if "poison" in event.to_json():
                raise StorageRefused(f"session {session_id}: event {event.seq} holds poison")
        await super().append(session_id, events)


async def test_a_refused_event_stops_writing_for_good_after_storing_everything_before_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = Refusing()
    refused: list[str] = []

    async def on_refused(session_id: str) -> None:
        refused.append(session_id)

    live = LiveSessions(FakeClock())
    async with anyio.create_task_group() as group:
        coordinator = PersistenceCoordinator(
            live, backend, group, clock=live.clock, on_refused=on_refused
        )
        session = Session.new("s1", cwd="/", created_at=1)
        live.open(session)
        detach = coordinator.attach(session, seed_end=0)
        assert await live.flush(session)
        add(live, session)
        live.append(session, "message/user", {"text": "poison"})
        add(live, session)
        with pytest.raises(FlushRefused, match="event 1 holds poison") as caught:
            await live.flush(session)
        assert caught.value.code == "storage_refused"
        # One batch of three, then one at a time: event 0 is stored, 1 refused, 2 waits.
        assert await backend.cursor("s1") == 1
        assert coordinator.durable_length(session) == 1
        await eventually(lambda: refused == ["s1"], "on_refused was called")
        appends = backend.appends
        live.clock.advance(600)  # type: ignore[attr-defined]  # never retried in the background
        await settle()
        add(live, session)
        with pytest.raises(FlushRefused):
            await live.flush(session)
        assert backend.appends == appends  # nor by a flush: the same refusal would come back
        with pytest.raises(StorageError, match=r"detached with events \[1, 4\) not stored"):
            await detach()
        await coordinator.aclose()
    assert refused == ["s1"]
    assert caplog.text.count("writing stopped at event 1") == 1


async def test_a_flush_whose_boundary_is_before_a_refused_event_is_acknowledged() -> None:
    backend = Refusing()
    async with running(backend) as (live, coordinator):
        session = Session.new("s1", cwd="/", created_at=1)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        add(live, session, 2)
        assert await live.flush(session)
        live.append(session, "message/user", {"text": "poison"})
        with pytest.raises(FlushRefused):
            await live.flush(session)
        assert await backend.cursor("s1") == 2
        assert [item.first for item in coordinator.unconfirmed()] == [2]
        with pytest.raises(StorageError, match=r"detached with events \[2, 3\) not stored"):
            await coordinator.aclose()
