"""`StorageReader` through the Host: tails, cold headers, pages and where their views run."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from dsh import SessionEvent, SessionLog, hookimpl
from dsh.host.catalogue import PageRequest
from dsh.host.host import Host
from dsh.models.absent import AbsentModel
from dsh.persistence import JsonlBackend, MemoryBackend
from dsh.persistence.errors import SessionNotFound
from dsh.session.errors import InvalidSessionId
from dsh.session.log import Session
from dsh.testing import FakeClock, FaultyBackend
from tests.host.persistence.contract import header

pytestmark = pytest.mark.anyio

ANCHOR = "test/anchor"
POINTER = "test/pointer"


class BackReference:
    """Views a `test/pointer` with the text of the nearest `test/anchor` before it, reading
    back through the log the way the schedule receipt does; records where it ran."""

    def __init__(self) -> None:
        self.threads: set[int] = set()

    @hookimpl
    def dsh_event_view(self, session: SessionLog, event: SessionEvent) -> dict[str, Any] | None:
        self.threads.add(threading.get_ident())
        if event.type != POINTER:
            return None
        for earlier in session.scan(0, event.seq, types={ANCHOR}, reverse=True):
            return {"anchor": earlier.data, "at": earlier.seq}
        return None


def long_log(length: int) -> list[SessionEvent]:
    events = []
    for seq in range(length):
        kind = ANCHOR if seq % 50 == 0 else POINTER if seq % 50 == 10 else "message/user"
        events.append(SessionEvent(seq=seq, type=kind, time=seq, data={"n": seq}))
    return events


class Counting(FaultyBackend):
    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.read_events = 0

    async def read(self, *args: Any, **kwargs: Any) -> Any:
        found = await super().read(*args, **kwargs)
        self.read_events += len(found)
        return found

    async def inspect(self, session_id: str) -> Any:
        raise AssertionError("a page must never read the whole log")


async def cold_host(tmp_path: Path, length: int) -> tuple[Host, Counting, BackReference]:
    inner = JsonlBackend(tmp_path)
    await inner.initialize(header(), long_log(length))
    await inner.aclose()
    backend = Counting(JsonlBackend(tmp_path))
    host = Host(backend=backend, model=AbsentModel(), clock=FakeClock(), cwd=str(tmp_path))
    plugin = BackReference()
    return host, backend, plugin


async def test_a_cold_page_reads_its_events_and_only_what_its_views_need(tmp_path: Path) -> None:
    host, backend, plugin = await cold_host(tmp_path, 20_000)
    async with host:
        host.pm.register(plugin, name="back-reference")
        page = await host.catalogue.page("s1", PageRequest(before=15_000, limit=100))
    assert page.attached is False
    assert (page.tail, [event.seq for event in page.events][::99]) == (20_000, [14_900, 14_999])
    assert page.views == {
        14_910: {"anchor": {"n": 14_900}, "at": 14_900},
        14_960: {"anchor": {"n": 14_950}, "at": 14_950},
    }
    assert backend.read_events < 200
    assert threading.get_ident() not in plugin.threads


async def test_a_cold_view_that_reaches_before_the_page_reads_back_ranged(tmp_path: Path) -> None:
    host, backend, plugin = await cold_host(tmp_path, 20_000)
    async with host:
        host.pm.register(plugin, name="back-reference")
        page = await host.catalogue.page("s1", PageRequest(from_seq=12_005, limit=10))
    assert page.views == {12_010: {"anchor": {"n": 12_000}, "at": 12_000}}
    assert backend.read_events < 100


async def test_an_attached_page_views_the_live_session_on_the_loop(tmp_path: Path) -> None:
    plugin = BackReference()
    async with Host(backend=MemoryBackend(), model=AbsentModel(), clock=FakeClock()) as host:
        host.pm.register(plugin, name="back-reference")
        session = (await host.create_session()).session
        host.live.append(session, ANCHOR, {"n": 0})
        host.live.append(session, POINTER, {})
        assert await host.live.flush(session)
        page = await host.catalogue.page(session.id, PageRequest())
    assert page.attached is True
    assert page.views == {1: {"anchor": {"n": 0}, "at": 0}}
    assert plugin.threads == {threading.get_ident()}


async def test_tail_and_stored_header_count_without_decoding(tmp_path: Path) -> None:
    host, backend, _ = await cold_host(tmp_path, 3_000)
    async with host:
        assert await host.catalogue.tail("s1") == 3_000
        found, length = await host.catalogue.header("s1")
        assert (found.id, length) == ("s1", 3_000)
        agent = await host.create_session()
        host.live.append(agent.session, "message/user", {"text": "hi", "source": {"kind": "user"}})
        assert await host.catalogue.tail(agent.session.id) == 1
        for call in (host.catalogue.tail, host.catalogue.header, host.catalogue.stored_log):
            with pytest.raises(SessionNotFound):
                await call("nobody")
            with pytest.raises(InvalidSessionId):
                await call("../s1")
    assert backend.read_events == 0


async def test_with_stored_log_runs_a_function_in_a_worker_thread(tmp_path: Path) -> None:
    host, _, _ = await cold_host(tmp_path, 500)

    def newest_anchor(log: SessionLog, before: int) -> tuple[int, int]:
        event = next(log.scan(0, before, types={ANCHOR}, reverse=True))
        return event.seq, threading.get_ident()

    async with host:
        seq, thread = await host.catalogue.with_stored_log("s1", newest_anchor, 420)
        stored = await host.catalogue.stored_log("s1")
    assert seq == 400 and thread != threading.get_ident()
    assert isinstance(stored, SessionLog) and len(stored) == 500


async def test_a_page_of_an_unknown_session_is_not_found(tmp_path: Path) -> None:
    async with Host(backend=MemoryBackend(), model=AbsentModel(), clock=FakeClock()) as host:
        with pytest.raises(SessionNotFound):
            await host.catalogue.page("nobody", PageRequest())
        session = Session.new("empty", cwd="/", created_at=1)
        await host.backend.initialize(session.header, [])
        page = await host.catalogue.page("empty", PageRequest())
    assert (page.events, page.tail, page.views) == ([], 0, {})
