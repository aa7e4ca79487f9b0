"""`StorageReader`: what storage can prove, for one Host.

The web layer asks the Host, and the Host asks this: the tail of a Session
(the live length, or the stored count), the header and length of a cold
one, a cold `StoredLog` for plugins, the proven stored prefix of a live one
(`PrefixProof`) and history pages with their views. Nothing here writes.

Where views are computed (DESIGN §9):

- **attached** (the Session is live): from the live object, in memory, on
  the event loop, but only for events in the proven stored prefix, capped at
  what the write path confirmed (`durable`): a line already in the file
  whose fsync has not returned — and may yet fail — is not durable, so its
  receipt must not show;
- **detached** (cold): the page's events are read from storage (one ranged
  read), then the views are computed in a worker thread against a
  `StoredLog` that starts out holding that page, so a plugin that needs more
  (a receipt walking back to its create) reads only that, ranged and
  type-filtered (see `storedlog`). No agent is published.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter

from ...persistence.backend import Backend
from ...session.event import SessionEvent
from ...session.header import SessionHeader
from ...session.live import LiveSessions
from ...session.log import Session, SessionLog
from .pages import HistoryPage, PageRequest, page_bounds
from .proof import PrefixProof
from .storedlog import StoredLog

__all__ = ["StorageReader", "ViewOf"]

T = TypeVar("T")
ViewOf = Callable[[SessionLog, SessionEvent], dict[str, Any] | None]
VIEW_THREADS = 4


class StorageReader:
    """Reads one Host's storage (see the module docstring).

    `durable(session)` is how many events of a live Session the write path
    confirmed; `view(log, event)` is the Host's one caller of `dsh_event_view`.
    """

    def __init__(
        self,
        live: LiveSessions,
        backend: Backend,
        *,
        durable: Callable[[Session], int],
        view: ViewOf,
        view_threads: int = VIEW_THREADS,
    ) -> None:
        self._live = live
        self._backend = backend
        self._durable = durable
        self._view = view
        self._view_threads = view_threads
        self._limiter: CapacityLimiter | None = None
        self.proof = PrefixProof(backend)

    async def tail(self, session_id: str) -> int | None:
        """The live length, else the stored count; None if there is no such Session."""
        live = self._live.find(session_id)
        if live is not None:
            return len(live)
        return await self._backend.cursor(session_id)

    async def stored_header(self, session_id: str) -> tuple[SessionHeader, int] | None:
        """The stored header and event count, decoding no events; None if not stored."""
        header = await self._backend.header(session_id)
        if header is None:
            return None
        length = await self._backend.cursor(session_id)
        return None if length is None else (header, length)

    async def stored_log(self, session_id: str) -> StoredLog | None:
        """The stored log as a `SessionLog` (read it from a worker thread); None if not stored."""
        described = await self.stored_header(session_id)
        if described is None:
            return None
        return StoredLog(self._backend, *described)

    async def in_worker(self, func: Callable[..., T], *args: Any) -> T:
        """Run `func(*args)` in a worker thread, where a `StoredLog` may be read."""
        if self._limiter is None:
            self._limiter = CapacityLimiter(self._view_threads)
        return await anyio.to_thread.run_sync(func, *args, limiter=self._limiter)

    async def proven_prefix(self, session: Session) -> int:
        """How many leading events of live `session` are stored, proven and confirmed."""
        return min(await self.proof.prove(session), self._durable(session))

    async def page(self, session_id: str, request: PageRequest) -> HistoryPage | None:
        """The page `request` selects, with its views; None if there is no such Session."""
        live = self._live.find(session_id)
        if live is not None:
            proven = await self.proven_prefix(live)
            start, stop = page_bounds(len(live), request)
            events = list(live.events[start:stop])
            views = self._views(live, events, proven)
            return HistoryPage(live.header, events, len(live), attached=True, views=views)
        log = await self.stored_log(session_id)
        if log is None:
            return None
        start, stop = page_bounds(len(log), request)
        events = await self._backend.read(session_id, start, stop) if start < stop else []
        log.prime(events, start, stop)
        views = await self.in_worker(self._views, log, events, len(log))
        return HistoryPage(log.header, events, len(log), attached=False, views=views)

    def _views(
        self, log: SessionLog, events: list[SessionEvent], proven: int
    ) -> dict[int, dict[str, Any]]:
        views: dict[int, dict[str, Any]] = {}
        for event in events:
            if event.seq >= proven:
                break
            view = self._view(log, event)
            if view is not None:
                views[event.seq] = view
        return views
