from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from dsh.persistence import MemoryBackend
from dsh.persistence.errors import StorageError
from dsh.session.event import SessionEvent
from dsh.session.header import SessionHeader
from dsh.testing import FaultyBackend, InjectedFault
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


def header(session_id: str = "s1") -> SessionHeader:
    return SessionHeader.model_validate(
        {
            "version": 1,
            "id": session_id,
            "cwd": "/",
            "createdAt": 0,
            "origin": {"kind": "api"},
            "lineage": None,
        }
    )


def event(seq: int) -> SessionEvent:
    return SessionEvent(seq=seq, type="test/tick", time=seq, data={"n": seq})


async def test_calls_pass_through_and_are_counted() -> None:
    backend = FaultyBackend(MemoryBackend())
    await backend.initialize(header(), [event(0)])
    await backend.append("s1", [event(1)])
    assert await backend.cursor("s1") == 2
    stored = await backend.inspect("s1")
    assert stored is not None and len(stored.events) == 2
    assert [summary.id for summary in await backend.list()] == ["s1"]
    await backend.release("s1")
    assert dict(backend.calls) == {
        "initialize": 1,
        "append": 1,
        "cursor": 1,
        "inspect": 1,
        "list": 1,
        "release": 1,
    }
    assert backend.session_calls["append", "s1"] == 1


async def test_a_fault_before_the_write_leaves_storage_unchanged() -> None:
    backend = FaultyBackend(MemoryBackend())
    await backend.initialize(header(), [])
    fault = backend.fail("append")
    with pytest.raises(InjectedFault, match="append call #1 failed before it took effect"):
        await backend.append("s1", [event(0)])
    assert fault.fired == 1
    assert await backend.cursor("s1") == 0
    await backend.append("s1", [event(0)])  # only one call was scripted to fail
    assert await backend.cursor("s1") == 1


async def test_a_fault_after_the_write_reports_failure_for_a_stored_batch() -> None:
    backend = FaultyBackend(MemoryBackend())
    backend.fail("initialize", after_write=True)
    with pytest.raises(InjectedFault, match="after it took effect"):
        await backend.initialize(header(), [event(0)])
    assert await backend.cursor("s1") == 1


async def test_nth_and_times_choose_which_calls_fail() -> None:
    backend = FaultyBackend(MemoryBackend())
    await backend.initialize(header(), [])
    backend.fail("cursor", nth=2, times=2)
    outcomes: list[int | str | None] = []
    for _ in range(4):
        try:
            outcomes.append(await backend.cursor("s1"))
        except InjectedFault:
            outcomes.append("failed")
    assert outcomes == [0, "failed", "failed", 0]


async def test_times_none_fails_for_good_until_cleared() -> None:
    backend = FaultyBackend(MemoryBackend())
    backend.fail("list", times=None)
    for _ in range(3):
        with pytest.raises(InjectedFault):
            await backend.list()
    backend.clear()
    assert await backend.list() == []


async def test_a_custom_error_is_raised_as_given() -> None:
    backend = FaultyBackend(MemoryBackend())
    error = ConnectionResetError("the database went away")
    backend.fail("inspect", error=error)
    with pytest.raises(ConnectionResetError) as info:
        await backend.inspect("s1")
    assert info.value is error


async def test_faults_and_holds_can_target_one_session() -> None:
    backend = FaultyBackend(MemoryBackend())
    await backend.initialize(header("a"), [])
    await backend.initialize(header("b"), [])
    backend.fail("append", session_id="b")
    await backend.append("a", [event(0)])
    with pytest.raises(InjectedFault):
        await backend.append("b", [event(0)])
    await backend.append("b", [event(0)])
    hold = backend.hold("append", session_id="a", nth=2)
    async with anyio.create_task_group() as group:
        group.start_soon(backend.append, "a", [event(1)])
        with anyio.fail_after(WAIT):
            await hold.entered.wait()
        await backend.append("b", [event(1)])  # other sessions are not held
        assert await backend.cursor("a") == 1
        hold.release()
    assert await backend.cursor("a") == 2


async def test_a_hold_after_the_write_pauses_once_it_has_landed() -> None:
    backend = FaultyBackend(MemoryBackend())
    await backend.initialize(header(), [])
    hold = backend.hold("append", after_write=True)
    async with anyio.create_task_group() as group:
        group.start_soon(backend.append, "s1", [event(0)])
        with anyio.fail_after(WAIT):
            await hold.entered.wait()
        assert await backend.inner.cursor("s1") == 1
        backend.clear()  # releases it


async def test_sync_faults_hit_the_jsonl_durability_point(tmp_path: Path) -> None:
    backend = FaultyBackend.jsonl(tmp_path)
    await backend.initialize(header(), [])
    assert backend.calls["sync"] == 3  # new directory, temp file, directory entry
    backend.fail("sync", after_write=True)
    with pytest.raises(StorageError, match="sync call #4 failed after it took effect"):
        await backend.append("s1", [event(0)])
    assert await backend.cursor("s1") == 0
    await backend.aclose()


async def test_scripting_mistakes_are_reported() -> None:
    backend = FaultyBackend(MemoryBackend())
    with pytest.raises(ValueError, match="no sync point"):
        backend.fail("sync")
    with pytest.raises(ValueError, match="cannot be held"):
        backend.hold("sync")
    with pytest.raises(ValueError, match="unknown operation"):
        backend.fail("delete")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="times must be at least 1"):
        backend.fail("append", times=0)
    with pytest.raises(ValueError, match="not about one session"):
        backend.fail("list", session_id="s1")
    await backend.list()
    with pytest.raises(ValueError, match="list call #1 already happened"):
        backend.fail("list", nth=1)


async def test_the_second_edition_reads_and_the_trash_pass_through_and_can_fail() -> None:
    backend = FaultyBackend(MemoryBackend())
    await backend.initialize(header(), [event(0), event(1)])
    assert await backend.header("s1") == header().canonical()
    assert await backend.read("s1", 1, types={"test/tick"}) == [event(1)]
    mark = await backend.mark("s1")
    assert mark is not None and mark.length == 2
    await backend.trash("s1")
    await backend.restore("s1")
    for operation in ("header", "read", "mark", "trash", "restore"):
        assert backend.calls[operation] == 1
        backend.fail(operation)  # type: ignore[arg-type]
    with pytest.raises(InjectedFault, match="header call #2"):
        await backend.header("s1")
    with pytest.raises(InjectedFault, match="read call #2"):
        await backend.read("s1")
    with pytest.raises(InjectedFault, match="mark call #2"):
        await backend.mark("s1")
    with pytest.raises(InjectedFault, match="trash call #2"):
        await backend.trash("s1")
    with pytest.raises(InjectedFault, match="restore call #2"):
        await backend.restore("s1")
    assert await backend.cursor("s1") == 2  # every fault struck before storage was touched
