from __future__ import annotations

import errno
import json
import os
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from dsh.host.host import Host
from dsh.models.absent import AbsentModel
from dsh.persistence.errors import SessionNotFound, StorageError
from dsh.persistence.jsonl import JsonlBackend
from dsh.session.event import SessionEvent
from dsh.session.header import Lineage, Origin
from dsh.session.log import Session
from dsh.web.history import History, PageRequest, page_bounds

from .conftest import MARKED, PLAIN, MarkerPlugin, PublicationCounter, StorageDouble

pytestmark = pytest.mark.anyio


async def live_with_marks(host: Host) -> Session:
    """A live Session: marked, plain, marked — all stored."""
    session = (await host.create_session()).session
    host.live.append(session, MARKED, {"n": 0})
    host.live.append(session, PLAIN, {})
    host.live.append(session, MARKED, {"n": 2})
    assert await host.live.flush(session) is True
    return session


async def test_attached_history_views_the_stored_prefix(host: Host) -> None:
    session = await live_with_marks(host)
    page = await History(host).page(session.id, PageRequest())
    assert page["attached"] is True
    assert page["tail"] == 3
    assert [event["seq"] for event in page["events"]] == [0, 1, 2]
    assert page["views"] == {
        "0": {"marked": {"n": 0}, "seq": 0},
        "2": {"marked": {"n": 2}, "seq": 2},
    }
    assert page["header"] == session.header.to_dict()


async def test_an_absent_delegation_depth_is_identity_equivalent_to_zero(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    assert session.header.delegation_depth is None
    stored = await backend.header(session.id)
    assert stored is not None and stored.delegation_depth == 0
    page = await History(host).page(session.id, PageRequest())
    assert set(page["views"]) == {"0", "2"}


async def test_a_live_delegation_depth_of_zero_matches_an_absent_stored_one(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    stored = await backend.header(session.id)
    assert stored is not None
    backend.tamper(session.id, header=stored.model_copy(update={"delegation_depth": None}))
    page = await History(host).page(session.id, PageRequest())
    assert set(page["views"]) == {"0", "2"}


@pytest.mark.parametrize(
    "changes",
    [
        {"cwd": "/somewhere/else"},
        {"lineage": Lineage(parentId="parent", forkedAt=0)},
        {"origin": Origin(kind="cli")},
        {"created_at": 1},
        {"id": "another"},
        {"delegation_depth": 1},
    ],
    ids=["cwd", "lineage", "origin", "createdAt", "id", "delegationDepth"],
)
async def test_a_stored_header_that_differs_withholds_every_view(
    host: Host, backend: StorageDouble, changes: dict[str, Any]
) -> None:
    session = await live_with_marks(host)
    stored = await backend.header(session.id)
    assert stored is not None
    backend.tamper(session.id, header=stored.model_copy(update=changes))
    page = await History(host).page(session.id, PageRequest())
    assert page["views"] == {}
    assert len(page["events"]) == 3


async def test_one_stored_event_that_differs_withholds_every_view(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    events = backend.stored_events(session.id)
    events[1] = events[1].replace(data={"changed": True})
    backend.tamper(session.id, events=events)
    page = await History(host).page(session.id, PageRequest())
    assert page["views"] == {}
    assert page["events"][1]["data"] == {}


async def test_a_stored_event_equal_in_python_but_not_in_json_is_a_difference(
    host: Host, backend: StorageDouble
) -> None:
    session = (await host.create_session()).session
    host.live.append(session, MARKED, {"flag": True})
    await host.live.flush(session)
    time = session.events[0].time
    backend.tamper(
        session.id, events=[SessionEvent(seq=0, type=MARKED, time=time, data={"flag": 1})]
    )
    assert (await History(host).page(session.id, PageRequest()))["views"] == {}


async def test_storage_longer_than_the_live_session_withholds_every_view(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    extra = SessionEvent(seq=3, type=PLAIN, time=0, data={})
    backend.tamper(session.id, events=[*backend.stored_events(session.id), extra])
    assert (await History(host).page(session.id, PageRequest()))["views"] == {}


async def test_missing_storage_withholds_every_view(host: Host, backend: StorageDouble) -> None:
    session = await live_with_marks(host)
    backend._logs.pop(session.id)
    page = await History(host).page(session.id, PageRequest())
    assert page["views"] == {}
    assert page["attached"] is True


@pytest.mark.parametrize("operation", ["mark", "header", "read"])
async def test_failing_storage_withholds_every_view_and_still_returns_raw_events(
    host: Host, backend: StorageDouble, operation: str
) -> None:
    session = await live_with_marks(host)
    backend.errors[operation] = StorageError("unreadable")
    page = await History(host).page(session.id, PageRequest())
    assert page["views"] == {}
    assert [event["type"] for event in page["events"]] == [MARKED, PLAIN, MARKED]


async def test_views_stop_at_the_end_of_the_stored_prefix(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    host.live.append(session, MARKED, {"n": 3})  # not flushed: may not be stored yet
    backend.tamper(session.id, events=backend.stored_events(session.id)[:3])
    page = await History(host).page(session.id, PageRequest())
    assert set(page["views"]) == {"0", "2"}
    assert page["tail"] == 4


async def test_a_verified_prefix_is_not_read_again_while_storage_holds_no_more(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    history = History(host)
    await history.page(session.id, PageRequest())
    reads = backend.calls.copy()
    page = await history.page(session.id, PageRequest())
    assert backend.calls["read"] == reads["read"]
    assert backend.calls["header"] == reads["header"]
    assert set(page["views"]) == {"0", "2"}


async def test_a_grown_log_is_compared_only_where_it_grew(
    host: Host, backend: StorageDouble, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await live_with_marks(host)
    history = History(host)
    assert await history.proven_prefix(session) == 3
    host.live.append(session, MARKED, {"n": 3})
    host.live.append(session, PLAIN, {})
    await host.live.flush(session)
    ranges: list[tuple[int, int | None]] = []
    real_read = backend.read

    async def read(session_id: str, start: int = 0, stop: int | None = None, **kw: Any) -> Any:
        ranges.append((start, stop))
        return await real_read(session_id, start, stop, **kw)

    monkeypatch.setattr(backend, "read", read)
    assert await history.proven_prefix(session) == 5
    assert ranges == [(3, 5)]


async def test_a_mark_failure_after_verification_withholds_views(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    history = History(host)
    await history.proven_prefix(session)
    backend.errors["mark"] = StorageError("gone")
    assert await history.proven_prefix(session) == 0


async def test_a_stored_log_that_vanished_after_verification_withholds_views(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    history = History(host)
    await history.proven_prefix(session)
    backend._logs.clear()
    assert await history.proven_prefix(session) == 0


async def test_a_shrunk_log_after_verification_is_compared_from_the_start(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    history = History(host)
    await history.proven_prefix(session)
    backend.tamper(session.id, events=backend.stored_events(session.id)[:1])
    assert await history.proven_prefix(session) == 1


async def test_a_rewritten_log_loses_its_views_until_it_is_verified_again(
    host: Host, backend: StorageDouble
) -> None:
    session = await live_with_marks(host)
    history = History(host)
    assert set((await history.page(session.id, PageRequest()))["views"]) == {"0", "2"}
    original = backend.stored_events(session.id)
    rewritten = [*original]
    rewritten[0] = rewritten[0].replace(data={"n": "rewritten"})
    backend.tamper(session.id, events=rewritten)
    assert (await history.page(session.id, PageRequest()))["views"] == {}
    assert (await history.page(session.id, PageRequest()))["views"] == {}
    backend.tamper(session.id, events=original)  # put back as it was: verified again
    assert set((await history.page(session.id, PageRequest()))["views"]) == {"0", "2"}


async def test_cold_history_computes_views_from_storage_without_activation(
    host: Host, publications: PublicationCounter, marker: MarkerPlugin
) -> None:
    session = await live_with_marks(host)
    await host.close_session(session.id)
    published = list(publications.published)
    page = await History(host).page(session.id, PageRequest())
    assert page["attached"] is False
    assert set(page["views"]) == {"0", "2"}
    assert page["tail"] == 3
    assert host.live.find(session.id) is None
    assert host.agent(session.id) is None
    assert publications.published == published


async def test_an_unknown_session_raises_session_not_found(host: Host) -> None:
    with pytest.raises(SessionNotFound):
        await History(host).page("nobody", PageRequest())


@pytest.mark.parametrize(
    ("tail", "request_", "bounds"),
    [
        (10, PageRequest(), (0, 10)),
        (10, PageRequest(limit=3), (7, 10)),
        (10, PageRequest(from_seq=2, limit=3), (2, 5)),
        (10, PageRequest(from_seq=9, limit=3), (9, 10)),
        (10, PageRequest(from_seq=12, limit=3), (10, 10)),
        (10, PageRequest(before=5, limit=3), (2, 5)),
        (10, PageRequest(before=2, limit=3), (0, 2)),
        (10, PageRequest(before=50, limit=3), (7, 10)),
        (0, PageRequest(), (0, 0)),
    ],
)
def test_page_bounds_select_from_before_or_the_tail(
    tail: int, request_: PageRequest, bounds: tuple[int, int]
) -> None:
    assert page_bounds(tail, request_) == bounds


def test_a_page_request_cannot_be_both_from_and_before() -> None:
    with pytest.raises(ValueError, match="not both"):
        PageRequest(from_seq=1, before=2)


async def test_views_are_computed_only_for_the_page(host: Host, marker: MarkerPlugin) -> None:
    session = await live_with_marks(host)
    asked = marker.asked
    page = await History(host).page(session.id, PageRequest(from_seq=1, limit=1))
    assert [event["seq"] for event in page["events"]] == [1]
    assert page["views"] == {}
    assert marker.asked == asked + 1


async def test_a_stored_line_whose_fsync_has_not_returned_gets_no_view(tmp_path: Path) -> None:
    """The line is in the file (the page cache) while its fsync hangs, then the fsync
    fails: a receipt shown in that window would never have been durable."""
    armed, entered, release = threading.Event(), threading.Event(), threading.Event()

    def sync(fd: int) -> None:
        if armed.is_set():
            armed.clear()
            entered.set()
            release.wait(10)
            raise OSError(errno.EIO, "injected: fsync failed")
        os.fsync(fd)

    backend = JsonlBackend(tmp_path, sync=sync)
    async with Host(backend=backend, model=AbsentModel()) as host:
        host.pm.register(MarkerPlugin(), name="test-marker")
        session = (await host.create_session()).session
        host.live.append(session, MARKED, {"n": 0})
        assert await host.live.flush(session)
        armed.set()
        host.live.append(session, MARKED, {"n": 1})
        outcome: list[object] = []

        async def flush() -> None:
            try:
                outcome.append(await host.live.flush(session))
            except Exception as error:
                outcome.append(type(error).__name__)

        # The eager writer, started by the append, is in the hanging fsync.
        await anyio.to_thread.run_sync(entered.wait, 10)
        async with anyio.create_task_group() as group:
            group.start_soon(flush)
            page = await History(host).page(session.id, PageRequest())
            release.set()

    assert [event["seq"] for event in page["events"]] == [0, 1]
    assert set(page["views"]) == {"0"}
    # The attempt whose fsync failed was the eager writer's; the flush was called
    # while it was in flight, so it retried the batch and answers for the retry.
    assert outcome == [True]
    stored = (tmp_path / "sessions" / f"{session.id}.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line).get("data") for line in stored[1:]] == [{"n": 0}, {"n": 1}]
