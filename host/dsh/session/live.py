"""The LiveSessions: live Sessions, every append, and the durability barrier.

Appending notifies the Session's scoped listeners synchronously and publishes
the `session/event` observation. That notification is *not* evidence of
durability: only `flush()` is (DESIGN §3).

`await live.flush(session)`:

1. captures `through = len(session)` at entry (an exclusive boundary);
2. awaits every listener's `flush(session)` concurrently and lets all settle;
3. if any listener raised, raises `FlushError` after all settled and publishes
   nothing — `FlushRefused` when one of the failures is `Unretryable` (storage
   refused an event for good: asking again cannot help);
4. returns True only if at least one listener returned literally True;
   observe-only listeners return None; no listeners, or only observe-only
   ones, give False;
5. on True, publishes `SessionFlushed(session, through)`. Observers are
   contained: a failing observer is logged and never reaches the flusher.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import anyio
from pydantic import JsonValue

from ..base.clock import Clock, SystemClock
from ..base.errors import Unretryable
from ..base.listeners import Listeners
from ..base.scope import Disposer
from .errors import FlushError, FlushRefused, SessionClosed
from .event import SessionEvent
from .log import Session

__all__ = [
    "LiveSessions",
    "Observation",
    "Observer",
    "SessionEventObserved",
    "SessionFlushed",
    "SessionListener",
]

log = logging.getLogger(__name__)


class SessionListener(Protocol):
    """A per-Session listener (persistence is one; observers of appends are others)."""

    def on_append(self, session: Session, event: SessionEvent) -> None:
        """Called synchronously for every append, in order. Must not block."""
        ...

    async def flush(self, session: Session) -> bool | None:
        """Make everything appended so far durable; True acknowledges durability.

        Return None when this listener only observes. Raise when durability
        could not be established.
        """
        ...


@dataclass(frozen=True, slots=True)
class SessionEventObserved:
    """`session/event`: an event was appended (not yet durable)."""

    session: Session
    event: SessionEvent


@dataclass(frozen=True, slots=True)
class SessionFlushed:
    """`session/flushed`: events `[0, through)` of `session` are durable."""

    session: Session
    through: int


Observation = SessionEventObserved | SessionFlushed
Observer = Callable[[Observation], None]


class LiveSessions:
    """Owns live Sessions, appends to them, and runs the flush barrier."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self._live: dict[str, Session] = {}
        # Keyed by the live Session objects, and only by them: `open` adds the entry
        # for a Session it makes live (no other one of its id is), `close` removes it
        # with it. A Session has an entry exactly while it is live, so finding its
        # entry is the live check.
        self._listeners: dict[Session, Listeners[SessionListener]] = {}
        self._observers: Listeners[Observer] = Listeners()

    # -- registry ---------------------------------------------------------

    def open(self, session: Session) -> Disposer:
        """Make `session` live. Its id must not be live already.

        Returns a disposer that closes it again (same as `close(session)`).
        """
        current = self._live.get(session.id)
        if current is not None:
            raise ValueError(f"session {session.id} is already live")
        self._live[session.id] = session
        self._listeners[session] = Listeners()
        return lambda: self.close(session)

    def close(self, session: Session) -> None:
        """Forget `session` and its listeners. Closing twice is harmless."""
        if self._live.get(session.id) is session:
            del self._live[session.id]
        self._listeners.pop(session, None)

    def get(self, session_id: str) -> Session:
        """The live Session with this id; raises `SessionClosed` if none is live here."""
        try:
            return self._live[session_id]
        except KeyError:
            raise SessionClosed(f"no live session {session_id!r}") from None

    def find(self, session_id: str) -> Session | None:
        return self._live.get(session_id)

    def is_live(self, session: Session) -> bool:
        return self._live.get(session.id) is session

    def live(self) -> Iterator[Session]:
        return iter(list(self._live.values()))

    # -- listeners and observers -----------------------------------------

    def add_listener(self, session: Session, listener: SessionListener) -> Disposer:
        """Listen to `session`'s appends and flushes; returns the disposer."""
        return self._listeners_of(session).add(listener)

    def observe(self, observer: Observer) -> Disposer:
        """Receive every `Observation` for every Session; returns the disposer."""
        return self._observers.add(observer)

    def _listeners_of(self, session: Session) -> Listeners[SessionListener]:
        listeners = self._listeners.get(session)
        if listeners is None:
            raise SessionClosed(f"session {session.id} is not live here")
        return listeners

    def _publish(self, observation: Observation) -> None:
        for observer in self._observers:
            try:
                observer(observation)
            except Exception:
                log.exception("observer %r failed on %s", observer, type(observation).__name__)

    # -- append and flush -------------------------------------------------

    def append(self, session: Session, type: str, data: JsonValue) -> SessionEvent:
        """Append one event, stamped with the wall clock, and notify synchronously.

        Raises `SessionClosed` if the Session is not live, or
        `pydantic.ValidationError` if the type or data is not valid.
        """
        # Every append of every Session passes here: one lookup is the live check (a
        # Session has listeners exactly while it is live), and the listeners and
        # observers are read as the tuples `Listeners` keeps, without a call while
        # nobody registered anything since the last append.
        registered = self._listeners.get(session)
        if registered is None:
            raise SessionClosed(f"session {session.id} is not live here")
        event = session._append(type, data, self.clock.wall_ms())
        listeners = registered.snapshot
        if listeners is None:
            listeners = registered.current()
        for listener in listeners:
            try:
                listener.on_append(session, event)
            except Exception:
                log.exception("listener %r failed on append to %s", listener, session.id)
        observers = self._observers.snapshot
        if observers is None:
            observers = self._observers.current()
        if observers:  # build nothing nobody reads
            self._publish(SessionEventObserved(session, event))
        return event

    async def flush(self, session: Session) -> bool:
        """The durability barrier; see the module docstring for every rule."""
        through = len(session)
        registered = self._listeners.get(session)
        listeners = () if registered is None else registered.current()
        if not listeners:
            return False
        results: list[bool | None] = [None] * len(listeners)
        errors: list[Exception] = []

        async def settle(index: int, listener: SessionListener) -> None:
            try:
                results[index] = await listener.flush(session)
            except Exception as error:
                errors.append(error)

        if len(listeners) == 1:
            # The same barrier without a task group, whose setup costs ≈ 0.1 ms (a third
            # of an fsync): a lone persistence listener is the common, latency-bound case.
            await settle(0, listeners[0])
        else:
            async with anyio.create_task_group() as group:
                for index, listener in enumerate(listeners):
                    group.start_soon(settle, index, listener)
        if errors:
            if any(isinstance(error, Unretryable) for error in errors):
                raise FlushRefused(session, errors)
            raise FlushError(session, errors)
        durable = any(result is True for result in results)
        if durable and self._observers:
            self._publish(SessionFlushed(session, through))
        return durable
