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
- `cursor`, `header`, `read`, `mark` and `inspect` report what is really
  stored. A crash artefact (a torn last record) is not part of the stored
  Session; a malformed record that is not a torn tail raises `CorruptLog`
  when it is read.
- Reads are ranged and cheap (second edition): `header` and `cursor` decode
  no events, `read(id, start, stop, types=…)` decodes only the events it
  returns, and `list` decodes no log. The defaults below derive them from
  `inspect`, which is correct but reads everything; real backends override
  them (the JSONL backend through its line index).
- `mark` pairs the cursor with an *incarnation*: an opaque value that stays
  equal while the log only grows by this backend's appends and changes when
  storage notices the log changed any other way (rewritten, truncated,
  replaced, restored). None means the backend cannot tell, and a reader must
  verify again every time.
- `trash` takes a Session out of the store (it is no longer listed or read)
  without destroying it; `restore` brings it back unchanged. `trashed` lists
  the ids in the trash and `inspect_trashed` reads one there, so that a copy
  of the store (`dsh store copy`) can carry the trash too.
- A method that raised may or may not have taken effect (a commit can succeed
  and its acknowledgement fail). Callers that need to know ask `cursor` and
  compare what `read` returns.
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..session.event import SessionEvent
from ..session.facts import SummaryFacts
from ..session.header import Lineage, SessionHeader
from ..session.ids import validate_session_id
from .errors import IntegrityError, SessionNotFound, StorageError
from .leases import LeaseBackend, LocalLeases

if TYPE_CHECKING:
    from .feed import EventFeed
    from .inbox import Inbox
    from .remote_actions import RemoteActions

__all__ = [
    "Backend",
    "Events",
    "LogMark",
    "SessionIds",
    "StoredSession",
    "StoredSummary",
    "check_contiguous",
    "select_events",
    "summarize",
]


@dataclass(frozen=True, slots=True, weakref_slot=True)
class StoredSession:
    """A Session as stored: its header, its events, and whether a torn tail was ignored.

    `mark` is where the log stood for the very read that returned these events
    (its length is `len(events)`), when the backend can say so; None when it
    cannot. A resume that has it need not prove the prefix again.
    """

    header: SessionHeader
    events: tuple[SessionEvent, ...]
    torn_tail: bool
    mark: LogMark | None = None


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """One line of `Backend.list()`: enough to show a Session without reading its events.

    `title` and `preview` follow `dsh.persistence.summary` (the latest
    `session/title`, the first line of the person's first message);
    `updated_at` is when the log last grew (its last event's time, or for a
    file its last write, epoch ms), None when it has no events.
    """

    id: str
    created_at: int
    length: int
    lineage: Lineage | None
    title: str | None = None
    preview: str | None = None
    updated_at: int | None = None


@dataclass(frozen=True, slots=True)
class LogMark:
    """Where a stored log stands: its `length` and its `incarnation` (see the module
    docstring; None when the backend cannot tell a rewrite from an append)."""

    length: int
    incarnation: Hashable | None


def summarize(header: SessionHeader, events: Sequence[SessionEvent]) -> StoredSummary:
    """The summary of a log held in memory (what `list()` reports for it)."""
    facts = SummaryFacts().add_all(events)
    return StoredSummary(
        id=header.id,
        created_at=header.created_at,
        length=len(events),
        lineage=header.lineage,
        title=facts.title,
        preview=facts.preview,
        updated_at=events[-1].time if events else None,
    )


def select_events(
    events: Sequence[SessionEvent],
    start: int,
    stop: int | None,
    types: Collection[str] | None,
) -> Events:
    """The events of `events` (seqs 0, 1, …) that `read(start, stop, types=…)` returns."""
    if start < 0:
        raise ValueError(f"read: start must be at least 0, not {start}")
    end = len(events) if stop is None else min(stop, len(events))
    chosen = events[start:end] if start < end else ()
    if types is None:
        return list(chosen)
    wanted = set(types)
    return [event for event in chosen if event.type in wanted]


def check_contiguous(session_id: str, events: Sequence[SessionEvent], start: int) -> None:
    """Raise `IntegrityError` unless `events` carry seqs `start, start + 1, …`."""
    for offset, event in enumerate(events):
        if event.seq != start + offset:
            raise IntegrityError(session_id, start + offset, event.seq)


# What `read` and `trashed` return, spelled once here: inside a `Backend`, `list` is a method.
Events = list[SessionEvent]
SessionIds = list[str]


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
        the seqs are not 0, 1, …, `StorageRefused` if storage can never hold
        these events as they are (nothing stored), `StorageError` if storage
        failed.
        """

    @abc.abstractmethod
    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        """Durably append `events`, which must start at the stored cursor, in one batch.

        An empty batch does nothing. Raises `SessionNotFound`, `IntegrityError`
        (wrong start or a gap; nothing stored), `CorruptLog`, `StorageRefused`
        (a value storage can never hold; nothing stored, so a retry of the same
        batch cannot succeed), or `StorageError`.
        """

    @abc.abstractmethod
    async def cursor(self, session_id: str) -> int | None:
        """How many events are really stored, or None if the Session is not stored."""

    @abc.abstractmethod
    async def inspect(self, session_id: str) -> StoredSession | None:
        """The stored header and events, or None if the Session is not stored; with the
        `mark` of what was read, where the backend can tell (see `StoredSession`)."""

    @abc.abstractmethod
    async def list(self) -> list[StoredSummary]:
        """A summary of every stored Session, sorted by id, decoding no log.

        Something in storage that is not a readable Session is skipped (and
        reported to the log by the backend), never an error for the whole list.
        """

    async def header(self, session_id: str) -> SessionHeader | None:
        """The stored header, or None if the Session is not stored. Decodes no events."""
        stored = await self.inspect(session_id)
        return None if stored is None else stored.header

    async def read(
        self,
        session_id: str,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
    ) -> Events:
        """The stored events with `start <= seq < stop` (`stop` None: to the end), oldest
        first, only those whose type is in `types` when given.

        A range past the stored end is cut at the end. Raises `SessionNotFound`,
        `ValueError` for a negative `start`, `CorruptLog` if a record it must
        return is malformed, `StorageError`.
        """
        stored = await self.inspect(session_id)
        if stored is None:
            raise SessionNotFound(f"session {session_id} is not stored")
        return select_events(stored.events, start, stop, types)

    async def mark(self, session_id: str) -> LogMark | None:
        """The stored length with the log's incarnation, or None if it is not stored."""
        cursor = await self.cursor(session_id)
        return None if cursor is None else LogMark(cursor, None)

    async def trash(self, session_id: str) -> None:
        """Take the Session out of the store, keeping it for `restore`.

        Afterwards it is not listed and reads as not stored. Raises
        `SessionNotFound`, `SessionExists` if the trash already holds that id,
        `StorageError`. The default refuses: the backend keeps no trash.
        """
        validate_session_id(session_id)
        raise StorageError(f"{type(self).__name__} has no trash; session {session_id} stays")

    async def restore(self, session_id: str) -> None:
        """Bring a trashed Session back, unchanged.

        Raises `SessionNotFound` if the trash does not hold it, `SessionExists`
        if a stored Session already has that id, `StorageError`. The default
        refuses: the backend keeps no trash.
        """
        validate_session_id(session_id)
        raise StorageError(f"{type(self).__name__} has no trash to restore {session_id} from")

    async def trashed(self) -> SessionIds:
        """The ids of the Sessions in the trash, sorted. The default: none (no trash)."""
        return []

    async def inspect_trashed(self, session_id: str) -> StoredSession | None:
        """A trashed Session's header and events (as `inspect` reads a stored one), or
        None if the trash does not hold it. Raises `CorruptLog`, `StorageError`. The
        default: None (no trash)."""
        validate_session_id(session_id)
        return None

    async def release(self, session_id: str) -> None:
        """Free per-Session resources (open files, cached cursors); storage is unchanged.

        Called when a live Session stops being written. The next call for the
        Session reopens whatever it needs. The default only validates the id.
        """
        validate_session_id(session_id)

    def lease_backend(self, owner: str, *, ttl: float = 10.0) -> LeaseBackend:
        """The leases that say which host writes which Session (`dsh.persistence.leases`).

        `owner` names the Host asking, `ttl` how long its leases last without
        renewal where they expire; called once per Host. The default is
        `LocalLeases`: one process, whose other writers the store keeps out
        by itself (the JSONL data directory lock). A store shared by several
        hosts returns leases that its writes check (the PostgreSQL store).
        """
        return LocalLeases(owner)

    def event_feed(self) -> EventFeed | None:
        """Wake-ups when any host stored events (`dsh.persistence.feed`); None (the
        default) for a store only one process writes."""
        return None

    def inbox(self) -> Inbox | None:
        """Where messages for a Session another host owns go (`dsh.persistence.inbox`);
        None (the default) for a store only one process writes."""
        return None

    def remote_actions(self) -> RemoteActions | None:
        """Where actions for a Session another host owns go
        (`dsh.persistence.remote_actions`); None (the default) for a store only one
        process writes."""
        return None

    async def summary(self, session_id: str) -> StoredSummary | None:
        """The list row of one stored Session, or None. The default filters `list`."""
        validate_session_id(session_id)
        for item in await self.list():
            if item.id == session_id:
                return item
        return None

    async def prepare(self) -> str | None:
        """Make storage ready to use (create its tables, apply its migrations).

        Safe to call concurrently from several processes, and again when
        storage is ready already. Returns one line saying what was done, or
        None when the backend needs no preparation (the default). Raises
        `StorageError` naming the store when it cannot be reached.
        """
        return None

    async def aclose(self) -> None:
        """Release every per-Session resource. The default does nothing."""
        return None
