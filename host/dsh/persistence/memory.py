"""An in-memory backend: the same contract as the JSONL one, kept in a dict.

For tests and for a host run without a data directory. Nothing survives the
process; everything else (atomic creation, cursor integrity, id validation)
behaves like a durable backend, so code tested against it behaves the same on
disk.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio.lowlevel

from ..session import SessionEvent, SessionHeader, validate_session_id
from .backend import (
    Backend,
    SessionExists,
    SessionNotFound,
    StoredSession,
    StoredSummary,
    check_contiguous,
)

__all__ = ["MemoryBackend"]


class MemoryBackend(Backend):
    """Session logs held in memory by this object."""

    def __init__(self) -> None:
        self._logs: dict[str, tuple[SessionHeader, list[SessionEvent]]] = {}

    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        validate_session_id(header.id)
        check_contiguous(header.id, events, 0)
        await anyio.lowlevel.checkpoint()
        if header.id in self._logs:
            raise SessionExists(f"session {header.id} is already stored (in memory)")
        self._logs[header.id] = (header.canonical(), list(events))

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        validate_session_id(session_id)
        await anyio.lowlevel.checkpoint()
        log = self._logs.get(session_id)
        if log is None:
            raise SessionNotFound(f"session {session_id} is not stored (in memory)")
        check_contiguous(session_id, events, len(log[1]))
        log[1].extend(events)

    async def cursor(self, session_id: str) -> int | None:
        validate_session_id(session_id)
        await anyio.lowlevel.checkpoint()
        log = self._logs.get(session_id)
        return None if log is None else len(log[1])

    async def inspect(self, session_id: str) -> StoredSession | None:
        validate_session_id(session_id)
        await anyio.lowlevel.checkpoint()
        log = self._logs.get(session_id)
        if log is None:
            return None
        return StoredSession(header=log[0], events=tuple(log[1]), torn_tail=False)

    async def list(self) -> list[StoredSummary]:
        await anyio.lowlevel.checkpoint()
        return [
            StoredSummary(
                id=session_id,
                created_at=header.created_at,
                length=len(events),
                lineage=header.lineage,
            )
            for session_id, (header, events) in sorted(self._logs.items())
        ]
