"""`Catalogue`: every read of what a Host's storage holds, by Session id.

Nothing here writes, and nothing here makes a Session live. The web layer,
the command line and the wake index read through it:

- `list(query)`, `summary(session)`, `stored_summary(id)`: the rows of the
  Session list; `live_elsewhere(id)`: the host that holds a Session live;
- `tail(id)`, `header(id)`, `page(id, request)`, `proven_prefix(session)`:
  what the history view shows (`StorageReader` does the work);
- `read(id)`: the whole stored log in memory (what a resume or a fork copies);
- the naming rule for logs — `stored_log(id)` is a cold `StoredLog` that
  reads ranged from a worker thread (`with_stored_log(id, func)` runs `func`
  there); `durable_log(session)` is the confirmed prefix of a live Session
  object; `with_durable_log(id, func)` chooses between the two and is how
  `states(id)` and `wake_at(id)` ask the plugins (`Contributions`, whose
  functions take the log itself);
- `health()`: the Sessions whose writes are failing, from memory.

A Session is listed only once its creation was acknowledged: a creation
that failed and could not even be moved to the trash is `hide`den (a
*phantom*), and every read here answers `SessionNotFound` for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Concatenate, ParamSpec, TypeVar

from pydantic import JsonValue

from ...persistence.backend import Backend, StoredSession
from ...persistence.coordinator import Unconfirmed
from ...persistence.errors import SessionNotFound
from ...persistence.leases import LeaseBackend
from ...plugins.contributions import Contributions
from ...session.facts import SummaryFacts
from ...session.header import SessionHeader
from ...session.ids import validate_session_id
from ...session.live import LiveSessions
from ...session.log import Session, SessionLog
from ...session.summary import SessionSummary
from ...session.types import SESSION_TITLE, USER_MESSAGE
from .pages import HistoryPage, PageRequest
from .reader import StorageReader
from .storedlog import StoredLog

__all__ = ["Catalogue", "StorageHealth"]

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StorageHealth:
    """Whether storage keeps up: `degraded` lists the Sessions whose writes are failing."""

    degraded: tuple[Unconfirmed, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.degraded

    @property
    def unconfirmed_events(self) -> int:
        return sum(item.count for item in self.degraded)


class Catalogue:
    """One Host's reads of its storage (see the module docstring).

    `durable(session)` is how many events of a live Session the write path
    confirmed and `unconfirmed()` which Sessions' writes are failing (both
    the coordinator's: nothing before the Host started).
    """

    def __init__(
        self,
        live: LiveSessions,
        backend: Backend,
        leases: LeaseBackend,
        contributions: Contributions,
        *,
        durable: Callable[[Session], int],
        unconfirmed: Callable[[], Iterable[Unconfirmed]],
    ) -> None:
        self._live = live
        self._backend = backend
        self._leases = leases
        self._contributions = contributions
        self._durable = durable
        self._unconfirmed = unconfirmed
        self._phantoms: set[str] = set()
        self.reader = StorageReader(live, backend, durable=durable, view=contributions.view)

    def hide(self, session_id: str) -> None:
        """Treat a Session whose failed creation stays stored as never made (a phantom)."""
        self._phantoms.add(session_id)

    def hidden(self, session_id: str) -> bool:
        """True for a phantom (`hide`)."""
        return session_id in self._phantoms

    def _found(self, session_id: str, found: T | None) -> T:
        if found is None or session_id in self._phantoms:
            raise SessionNotFound(f"no session {session_id!r}")
        return found

    # -- one Session ----------------------------------------------------------------

    async def read(self, session_id: str) -> StoredSession:
        """The whole stored log of a Session (what a resume or fork needs); never publishes."""
        validate_session_id(session_id)
        return self._found(session_id, await self._backend.inspect(session_id))

    async def tail(self, session_id: str) -> int:
        """How many events the Session has: live, its length; cold, its stored count."""
        tail = await self.reader.tail(validate_session_id(session_id))
        return self._found(session_id, tail)

    async def header(self, session_id: str) -> tuple[SessionHeader, int]:
        """A stored Session's header and event count, decoding no events."""
        described = await self.reader.stored_header(validate_session_id(session_id))
        return self._found(session_id, described)

    async def stored_log(self, session_id: str) -> StoredLog:
        """A cold, read-only `SessionLog` of what storage holds for the Session.

        Its `event()` and `scan()` read storage (ranged, type-filtered), so
        call them from a worker thread: `with_stored_log` runs a function
        there. Never publishes an agent.
        """
        stored = await self.reader.stored_log(validate_session_id(session_id))
        return self._found(session_id, stored)

    async def with_stored_log(
        self,
        session_id: str,
        func: Callable[Concatenate[SessionLog, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`func(log, *args, **kwargs)` in a worker thread, with the Session's `stored_log`."""
        stored = await self.stored_log(session_id)
        return await self.reader.in_worker(lambda: func(stored, *args, **kwargs))

    def durable_log(self, session: Session) -> SessionLog:
        """The prefix of live `session` that its storage confirmed, as a `SessionLog`."""
        return session.prefix(self._durable(session))

    async def with_durable_log(
        self,
        session_id: str,
        func: Callable[Concatenate[SessionLog, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`func(log, ...)` on what hooks read of a Session; returns what it returns.

        The one place that chooses: a live Session's confirmed prefix (in
        memory: `func` runs here, on the event loop), or a cold Session's
        stored log (read ranged and type-filtered: `func` runs in a worker
        thread, so no read blocks the loop). Raises `SessionNotFound` or
        `InvalidSessionId`.
        """
        validate_session_id(session_id)
        live = self._live.find(session_id)
        if live is not None:
            return func(self.durable_log(live), *args, **kwargs)
        return await self.with_stored_log(session_id, func, *args, **kwargs)

    async def states(self, session_id: str) -> dict[str, JsonValue]:
        """Every plugin's state of a Session's durable events: live or cold, never
        starting an agent (`Contributions.states`)."""
        return await self.with_durable_log(session_id, self._contributions.states)

    async def wake_at(self, session_id: str) -> int | None:
        """When a plugin first wants the Session live, from its durable events
        (`Contributions.wake_at`)."""
        return await self.with_durable_log(session_id, self._contributions.wake_at)

    async def page(self, session_id: str, request: PageRequest) -> HistoryPage:
        """A page of history with the views storage vouches for (`StorageReader.page`)."""
        page = await self.reader.page(validate_session_id(session_id), request)
        return self._found(session_id, page)

    async def proven_prefix(self, session: Session) -> int:
        """How many leading events of live `session` are stored, proven and confirmed."""
        return await self.reader.proven_prefix(session)

    def health(self) -> StorageHealth:
        """The Sessions whose writes are failing now (from memory: never touches storage)."""
        return StorageHealth(tuple(self._unconfirmed()))

    # -- the Session list -------------------------------------------------------------

    async def list(self, query: str | None = None) -> list[SessionSummary]:
        """Every stored Session, newest first, with live ones marked; with `query`, only
        those it matches (`SessionSummary.matches`: title, first message, id start)."""
        rows: dict[str, SessionSummary] = {}
        elsewhere = await self._leases.held_elsewhere()
        for item in await self._backend.list():
            if item.id in self._phantoms:
                continue
            live = self._live.find(item.id)
            rows[item.id] = (
                self.summary(live)
                if live is not None
                else SessionSummary(
                    item.id,
                    item.created_at,
                    item.id in elsewhere,  # live on another host
                    item.length,
                    item.lineage,
                    item.title,
                    item.preview,
                    updated_at=item.updated_at,
                )
            )
        for session in self._live.live():
            if session.id not in rows:
                rows[session.id] = self.summary(session)
        chosen = [row for row in rows.values() if query is None or row.matches(query)]
        return sorted(chosen, key=lambda row: (row.created_at, row.id), reverse=True)

    def summary(self, session: Session) -> SessionSummary:
        """The list row of a live Session, with its plugins' compact summaries."""
        facts = SummaryFacts()
        for event in session.scan(types={SESSION_TITLE}, reverse=True):
            facts.add(event)
            break
        for event in session.scan(types={USER_MESSAGE}):
            facts.add(event)
            if facts.preview is not None:
                break
        live = self._live.is_live(session)
        return SessionSummary(
            session.id,
            session.header.created_at,
            live,
            len(session),
            session.header.lineage,
            facts.title,
            facts.preview,
            self._contributions.summaries(session, self._durable(session)) if live else None,
            updated_at=session.event(len(session) - 1).time if len(session) else None,
        )

    async def stored_summary(self, session_id: str, *, live: bool) -> SessionSummary:
        """The list row of a Session from storage (one live on another host, say)."""
        validate_session_id(session_id)
        item = await self._backend.summary(session_id)
        if item is None:
            raise SessionNotFound(f"session {session_id} is not stored")
        return SessionSummary(
            item.id,
            item.created_at,
            live,
            item.length,
            item.lineage,
            item.title,
            item.preview,
            updated_at=item.updated_at,
        )

    async def live_elsewhere(self, session_id: str) -> str | None:
        """The host that holds the Session live, when that is another host."""
        if self._live.find(session_id) is not None:
            return None
        return (await self._leases.held_elsewhere([session_id])).get(session_id)
