"""The Session log: the read-only `SessionLog` view and the live `Session`.

A Session is an append-only list of `SessionEvent`s (`dsh.session.event`)
under a `SessionHeader` (`dsh.session.header`). The live `Session` object is
deliberately plain: only the `LiveSessions` appends to it (through
`_append`), and its identity — not its id — names one live lifecycle, so a
Session reopened under the same id is a different object.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterator, Sequence
from typing import Literal, Protocol, overload, runtime_checkable

from pydantic import JsonValue

from .event import SessionEvent
from .header import Lineage, Origin, SessionHeader
from .ids import validate_session_id
from .types import END_SEED

__all__ = ["Session", "SessionLog"]


@runtime_checkable
class SessionLog(Protocol):
    """A read-only view of one Session's log: what plugins read to fold and present.

    A live `Session` is one; the host also hands plugins stored logs of cold
    Sessions through this protocol, backed by ranged reads, so a plugin must
    not assume the whole log is in memory. Read what you need:

    - `event(seq)` is one event (`IndexError` outside `[0, len(log))`);
    - `scan(start, stop, types=..., reverse=...)` yields the events with
      `start <= seq < stop` (`stop` None: to the end), oldest first unless
      `reverse`, only those whose type is in `types` when given. Filtering by
      type is what keeps a fold of one plugin's events cheap in a long log.

    `len(log)` counts the events the view can read; `fold_start` is where
    plugins start folding (`seedLength` for a fork, else 0).
    """

    @property
    def header(self) -> SessionHeader: ...

    @property
    def id(self) -> str: ...

    @property
    def fold_start(self) -> int: ...

    def __len__(self) -> int: ...

    def event(self, seq: int) -> SessionEvent: ...

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]: ...


class Session:
    """A live Session: a header and its append-only events.

    Construct one with `new`, `fork` or `resume`. Appending belongs to the
    `LiveSessions` (which notifies listeners); nothing ever removes or rewrites
    an event. Equality is identity. A Session is a `SessionLog`: it keeps the
    seqs of each event type, so `scan(types=...)` visits only matching events.
    """

    __slots__ = ("__weakref__", "_by_type", "_events", "header")

    def __init__(self, header: SessionHeader, events: Sequence[SessionEvent] = ()) -> None:
        self._events: list[SessionEvent] = list(events)
        if [event.seq for event in self._events] != list(range(len(self._events))):
            index, event = next(
                (index, event) for index, event in enumerate(self._events) if event.seq != index
            )
            raise ValueError(f"session {header.id}: event at position {index} has seq {event.seq}")
        self.header = header
        self._by_type: dict[str, list[int]] = {}
        for seq, event in enumerate(self._events):
            seqs = self._by_type.get(event.type)
            if seqs is None:
                self._by_type[event.type] = [seq]
            else:
                seqs.append(seq)

    # -- construction -----------------------------------------------------

    @classmethod
    def new(
        cls,
        session_id: str,
        *,
        cwd: str,
        created_at: int,
        origin: Literal["web", "cli", "fork", "api"] = "web",
        delegation_depth: int | None = None,
    ) -> Session:
        """A fresh, empty Session."""
        header = SessionHeader(
            version=1,
            id=validate_session_id(session_id),
            cwd=cwd,
            createdAt=created_at,
            origin=Origin(kind=origin),
            lineage=None,
            delegationDepth=delegation_depth,
        )
        return cls(header)

    @classmethod
    def fork(
        cls,
        parent_header: SessionHeader,
        parent_events: Sequence[SessionEvent],
        child_id: str,
        *,
        at: int,
        created_at: int,
    ) -> Session:
        """A child that copies `parent_events[:at]` unchanged, then `session/end-seed`.

        The child's `seedLength` is `at + 1`: events from there on belong to the
        child. It keeps the parent's `delegationDepth`: a fork of a delegated
        Session is a delegated Session too.
        """
        if not 0 <= at <= len(parent_events):
            raise ValueError(
                f"cannot fork session {parent_header.id} at {at}: "
                f"it has {len(parent_events)} events"
            )
        header = SessionHeader(
            version=1,
            id=validate_session_id(child_id),
            cwd=parent_header.cwd,
            createdAt=created_at,
            origin=Origin(kind="fork"),
            lineage=Lineage(parentId=parent_header.id, forkedAt=at),
            delegationDepth=parent_header.delegation_depth,
            seedLength=at + 1,
        )
        prefix = list(parent_events[:at])
        prefix.append(SessionEvent(seq=at, type=END_SEED, time=created_at, data={}))
        return cls(header, prefix)

    @classmethod
    def resume(
        cls,
        header: SessionHeader,
        stored: Sequence[SessionEvent],
        *,
        resumed_at: int,
        marker: SessionEvent | None = None,
    ) -> Session:
        """A new live object for a stored Session, ending in a fresh `session/end-seed`.

        `marker` is the end-seed an earlier attempt to resume this Session
        appended before it failed: if the stored log ends with exactly that
        event (the attempt's write landed, its acknowledgement did not), the
        Session continues after it instead of appending a second one.
        """
        events = list(stored)
        if marker is None or not events or events[-1].to_json() != marker.to_json():
            events.append(SessionEvent(seq=len(events), type=END_SEED, time=resumed_at, data={}))
        return cls(header, events)

    # -- reading ----------------------------------------------------------

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def events(self) -> Sequence[SessionEvent]:
        """A read-only view of the events (the list itself is never handed out)."""
        return _EventsView(self._events)

    @property
    def fold_start(self) -> int:
        """Where plugins start folding: `seedLength` for a fork, else 0."""
        return self.header.seed_length or 0

    def __len__(self) -> int:
        return len(self._events)

    def event(self, seq: int) -> SessionEvent:
        """The event at `seq`; raises `IndexError` outside `[0, len(self))`."""
        if not 0 <= seq < len(self._events):
            raise IndexError(f"session {self.header.id} has no event {seq}")
        return self._events[seq]

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]:
        """The events with `start <= seq < stop`, optionally of `types` only (`SessionLog`)."""
        end = len(self._events) if stop is None else min(stop, len(self._events))
        first = max(start, 0)
        seqs: Sequence[int]
        if types is None:
            seqs = range(first, end)
        else:
            runs = [_within(self._by_type.get(name, []), first, end) for name in set(types)]
            seqs = runs[0] if len(runs) == 1 else sorted(seq for run in runs for seq in run)
        for seq in reversed(seqs) if reverse else seqs:
            yield self._events[seq]

    def prefix(self, stop: int) -> SessionLog:
        """A read-only `SessionLog` of this Session's events `[0, stop)` (e.g. its durable part).

        The view is live: it reads this Session, but never past `stop`
        (clamped to the Session's length when it is read).
        """
        return _Prefix(self, stop)

    def __repr__(self) -> str:
        return f"<Session {self.header.id} len={len(self._events)} at {id(self):#x}>"

    # -- appending (LiveSessions only) -----------------------------------

    def _append(self, type: str, data: JsonValue, time: int) -> SessionEvent:
        seq = len(self._events)
        event = SessionEvent(seq, type, time, data)  # in order, not by keyword: see the class
        self._events.append(event)
        seqs = self._by_type.get(type)
        if seqs is None:
            self._by_type[type] = [seq]
        else:
            seqs.append(seq)
        return event


class _Prefix:
    """The first `stop` events of a Session, as a `SessionLog`."""

    __slots__ = ("_session", "_stop")

    def __init__(self, session: Session, stop: int) -> None:
        if stop < 0:
            raise ValueError(f"a prefix has a length of at least 0, not {stop}")
        self._session = session
        self._stop = stop

    @property
    def header(self) -> SessionHeader:
        return self._session.header

    @property
    def id(self) -> str:
        return self._session.id

    @property
    def fold_start(self) -> int:
        return self._session.fold_start

    def __len__(self) -> int:
        return min(self._stop, len(self._session))

    def event(self, seq: int) -> SessionEvent:
        if not 0 <= seq < len(self):
            raise IndexError(f"session {self.id} has no event {seq} in its first {len(self)}")
        return self._session.event(seq)

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]:
        end = len(self) if stop is None else min(stop, len(self))
        return self._session.scan(start, end, types=types, reverse=reverse)

    def __repr__(self) -> str:
        return f"<first {len(self)} events of {self._session!r}>"


def _within(seqs: Sequence[int], start: int, stop: int) -> Sequence[int]:
    """The part of the sorted `seqs` in `[start, stop)`."""
    return seqs[bisect_left(seqs, start) : bisect_left(seqs, stop)]


class _EventsView(Sequence[SessionEvent]):
    """A live, read-only window on a Session's event list."""

    __slots__ = ("_items",)

    def __init__(self, items: list[SessionEvent]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionEvent]: ...
    def __getitem__(self, index: int | slice) -> SessionEvent | Sequence[SessionEvent]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[SessionEvent]:
        return iter(self._items)
