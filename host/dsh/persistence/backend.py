"""The storage interface every persistence backend implements (DESIGN §4).

A backend stores Sessions as a header plus an append-only run of events. It
knows nothing about live Sessions, listeners or flushes: the coordinator
decides *what* to write and *when*; a backend only makes one call durable at a
time and reports what it really holds.

The rules every backend keeps (the contract suite in
`tests/host/persistence/contract.py` checks each one):

- Every method validates the Session id before it touches storage.
- `initialize` creates a Session atomically: afterwards it exists with exactly
  the given prefix, or it does not exist at all. It refuses an existing id.
- `append` is one atomic, durable batch that must continue exactly at the
  stored cursor; anything else raises `IntegrityError` and stores nothing.
- `cursor` and `inspect` report what is really stored. A crash artefact (a
  torn last record) is not part of the stored Session; a malformed record that
  is not a torn tail raises `CorruptLog`.
- A method that raised may or may not have taken effect (a commit can succeed
  and its acknowledgement fail). Callers that need to know ask `cursor`.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..session import Lineage, SessionEvent, SessionHeader, validate_session_id

__all__ = [
    "Backend",
    "CorruptLog",
    "IntegrityError",
    "SessionExists",
    "SessionNotFound",
    "StorageError",
    "StoredSession",
    "StoredSummary",
    "check_contiguous",
]


@dataclass(frozen=True, slots=True, weakref_slot=True)
class StoredSession:
    """A Session as stored: its header, its events, and whether a torn tail was ignored."""

    header: SessionHeader
    events: tuple[SessionEvent, ...]
    torn_tail: bool


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """One line of `Backend.list()`: enough to show a Session without reading its events."""

    id: str
    created_at: int
    length: int
    lineage: Lineage | None


class StorageError(Exception):
    """Storage failed or refused an operation. The message names the Session or file."""


class SessionExists(StorageError):
    """`initialize` was asked to create a Session that is already stored."""


class SessionNotFound(StorageError):
    """`append` was asked to extend a Session that is not stored."""


class IntegrityError(StorageError):
    """A batch does not continue exactly at the stored cursor; nothing was stored."""

    def __init__(self, session_id: str, expected: int, got: int | None) -> None:
        found = "an empty batch" if got is None else f"seq {got}"
        super().__init__(
            f"session {session_id}: a batch must continue at seq {expected}, found {found}"
        )
        self.session_id = session_id
        self.expected = expected
        self.got = got


class CorruptLog(StorageError):
    """A stored record is malformed and is not a torn tail (a crash artefact)."""

    def __init__(self, path: Path | str, line: int, reason: str) -> None:
        super().__init__(f"{path}: line {line}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


def check_contiguous(session_id: str, events: Sequence[SessionEvent], start: int) -> None:
    """Raise `IntegrityError` unless `events` carry seqs `start, start + 1, …`."""
    for offset, event in enumerate(events):
        if event.seq != start + offset:
            raise IntegrityError(session_id, start + offset, event.seq)


class Backend(abc.ABC):
    """Durable storage for Session logs. All methods are coroutines.

    A backend is safe to share between concurrent callers working on
    *different* Sessions; calls for one Session are made one at a time by its
    writer (the coordinator guarantees that), but backends must still keep
    their own state consistent if two happen to overlap.
    """

    @abc.abstractmethod
    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        """Create Session `header.id` holding exactly `events` (seqs 0, 1, …), atomically.

        Raises `SessionExists` if it is already stored, `IntegrityError` if
        the seqs are not 0, 1, …, `StorageError` if storage failed.
        """

    @abc.abstractmethod
    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        """Durably append `events`, which must start at the stored cursor, in one batch.

        An empty batch does nothing. Raises `SessionNotFound`, `IntegrityError`
        (wrong start or a gap; nothing stored), `CorruptLog`, or `StorageError`.
        """

    @abc.abstractmethod
    async def cursor(self, session_id: str) -> int | None:
        """How many events are really stored, or None if the Session is not stored."""

    @abc.abstractmethod
    async def inspect(self, session_id: str) -> StoredSession | None:
        """The stored header and events, or None if the Session is not stored."""

    @abc.abstractmethod
    async def list(self) -> list[StoredSummary]:
        """A summary of every stored Session, sorted by id."""

    async def release(self, session_id: str) -> None:
        """Free per-Session resources (open files, cached cursors); storage is unchanged.

        Called when a live Session stops being written. The next call for the
        Session reopens whatever it needs. The default only validates the id.
        """
        validate_session_id(session_id)

    async def aclose(self) -> None:
        """Release every per-Session resource. The default does nothing."""
        return None
