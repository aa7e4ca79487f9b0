"""The `Backend` base class: the defaults a backend that offers only the first edition gets."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dsh.persistence import Backend, LogMark, MemoryBackend, StoredSession
from dsh.persistence.backend import StoredSummary, select_events, summarize
from dsh.persistence.errors import SessionNotFound, StorageError
from dsh.session.event import SessionEvent
from dsh.session.header import SessionHeader

from .contract import events, header

pytestmark = pytest.mark.anyio


class FirstEdition(Backend):
    """Only the abstract methods, over a MemoryBackend: every second-edition read is a
    default derived from `inspect`."""

    def __init__(self) -> None:
        self.inner = MemoryBackend()
        self.inspected = 0

    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        await self.inner.initialize(header, events)

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        await self.inner.append(session_id, events)

    async def cursor(self, session_id: str) -> int | None:
        return await self.inner.cursor(session_id)

    async def inspect(self, session_id: str) -> StoredSession | None:
        self.inspected += 1
        return await self.inner.inspect(session_id)

    async def list(self) -> list[StoredSummary]:
        return await self.inner.list()


async def test_the_defaults_read_through_inspect_and_cannot_tell_a_rewrite() -> None:
    backend = FirstEdition()
    assert await backend.header("s1") is None
    assert await backend.mark("s1") is None
    with pytest.raises(SessionNotFound, match="s1"):
        await backend.read("s1")
    await backend.initialize(header(), events(0, 5))
    assert await backend.header("s1") == header().canonical()
    assert await backend.read("s1", 1, 3) == events(1, 3)
    assert await backend.read("s1", 3, types={"message/user"}) == events(3, 5)
    assert await backend.mark("s1") == LogMark(5, None)
    assert backend.inspected == 5


async def test_the_default_trash_refuses_and_keeps_the_session() -> None:
    backend = FirstEdition()
    await backend.initialize(header(), events(0, 1))
    with pytest.raises(StorageError, match="FirstEdition has no trash; session s1 stays"):
        await backend.trash("s1")
    with pytest.raises(StorageError, match="no trash to restore s1 from"):
        await backend.restore("s1")
    assert await backend.cursor("s1") == 1
    assert await backend.trashed() == []
    assert await backend.inspect_trashed("s1") is None


def test_select_events_is_the_slice_and_the_filter_a_read_returns() -> None:
    log = events(0, 6)
    assert select_events(log, 2, 4, None) == log[2:4]
    assert select_events(log, 4, None, {"message/user"}) == log[4:]
    assert select_events(log, 5, 2, None) == []
    assert select_events(log, 0, None, {"other/type"}) == []
    with pytest.raises(ValueError, match="start"):
        select_events(log, -1, None, None)


def test_summarize_counts_and_finds_the_title_and_preview() -> None:
    log = [
        SessionEvent(seq=0, type="session/title", time=0, data={"title": "Plans"}),
        SessionEvent(
            seq=1, type="message/user", time=0, data={"text": "Go", "source": {"kind": "user"}}
        ),
    ]
    assert summarize(header(), log) == StoredSummary(
        id="s1",
        created_at=header().created_at,
        length=2,
        lineage=None,
        title="Plans",
        preview="Go",
        updated_at=0,
    )
    assert summarize(header(), []).updated_at is None
