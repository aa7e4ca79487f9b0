"""An in-memory backend: the same contract as the JSONL one, kept in a dict.

For tests and for a host run without a data directory (`--store memory:`).
Nothing survives the process; everything else (atomic creation, cursor
integrity, id validation, ranged reads, the trash) behaves like a durable
backend, so code tested against it behaves the same on disk. A Session's
incarnation is a number that changes when it is created or restored.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import anyio.lowlevel

from ..session.event import SessionEvent
from ..session.header import SessionHeader
from ..session.ids import validate_session_id
from .backend import (
    Backend,
    Events,
    LogMark,
    SessionIds,
    StoredSession,
    StoredSummary,
    check_contiguous,
    select_events,
    summarize,
)
from .errors import SessionExists, SessionNotFound

__all__ = ["MemoryBackend"]


@dataclass(slots=True)
class _Log:
    header: SessionHeader
    events: list[SessionEvent]
    incarnation: int


class MemoryBackend(Backend):
    """Session logs held in memory by this object."""

    def __init__(self) -> None:
        self._logs: dict[str, _Log] = {}
        self._trash: dict[str, _Log] = {}
        self._incarnations = itertools.count(1)

    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        validate_session_id(header.id)
        check_contiguous(header.id, events, 0)
        await anyio.lowlevel.checkpoint()
        if header.id in self._logs:
            raise SessionExists(f"session {header.id} is already stored (in memory)")
        self._logs[header.id] = _Log(header.canonical(), list(events), next(self._incarnations))

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        validate_session_id(session_id)
        await anyio.lowlevel.checkpoint()
        log = self._logs.get(session_id)
        if log is None:
            raise SessionNotFound(f"session {session_id} is not stored (in memory)")
        check_contiguous(session_id, events, len(log.events))
        log.events.extend(events)

    async def cursor(self, session_id: str) -> int | None:
        log = await self._find(session_id)
        return None if log is None else len(log.events)

    async def mark(self, session_id: str) -> LogMark | None:
        log = await self._find(session_id)
        return None if log is None else LogMark(len(log.events), log.incarnation)

    async def header(self, session_id: str) -> SessionHeader | None:
        log = await self._find(session_id)
        return None if log is None else log.header

    async def read(
        self,
        session_id: str,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
    ) -> Events:
        log = await self._find(session_id)
        if log is None:
            raise SessionNotFound(f"session {session_id} is not stored (in memory)")
        return select_events(log.events, start, stop, types)

    async def inspect(self, session_id: str) -> StoredSession | None:
        log = await self._find(session_id)
        if log is None:
            return None
        events = tuple(log.events)
        mark = LogMark(len(events), log.incarnation)
        return StoredSession(header=log.header, events=events, torn_tail=False, mark=mark)

    async def list(self) -> list[StoredSummary]:
        await anyio.lowlevel.checkpoint()
        return [summarize(log.header, log.events) for _, log in sorted(self._logs.items())]

    async def trash(self, session_id: str) -> None:
        log = await self._find(session_id)
        if log is None:
            raise SessionNotFound(f"session {session_id} is not stored (in memory)")
        if session_id in self._trash:
            raise SessionExists(f"the trash already holds a session {session_id} (in memory)")
        self._trash[session_id] = self._logs.pop(session_id)

    async def restore(self, session_id: str) -> None:
        validate_session_id(session_id)
        await anyio.lowlevel.checkpoint()
        log = self._trash.get(session_id)
        if log is None:
            raise SessionNotFound(f"the trash holds no session {session_id} (in memory)")
        if session_id in self._logs:
            raise SessionExists(f"session {session_id} is already stored (in memory)")
        log.incarnation = next(self._incarnations)
        self._logs[session_id] = self._trash.pop(session_id)

    async def trashed(self) -> SessionIds:
        await anyio.lowlevel.checkpoint()
        return sorted(self._trash)

    async def inspect_trashed(self, session_id: str) -> StoredSession | None:
        validate_session_id(session_id)
        await anyio.lowlevel.checkpoint()
        log = self._trash.get(session_id)
        if log is None:
            return None
        events = tuple(log.events)
        return StoredSession(log.header, events, False, LogMark(len(events), log.incarnation))

    async def _find(self, session_id: str) -> _Log | None:
        validate_session_id(session_id)
        await anyio.lowlevel.checkpoint()
        return self._logs.get(session_id)
