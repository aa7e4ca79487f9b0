"""History pages: a Session's events with the views storage can vouch for (DESIGN §9).

A page is `{"header","events","views","attached","tail"}`, where `views` maps
`"<seq>"` to the view of each event on the page that has one.

- **Attached** (the Session is live): the events come from the live object,
  but a view is a receipt of durability, so views are added only to the
  prefix storage proves: the stored header must be identity-equivalent to
  the live one (`SessionHeader.identity_equals`) and every stored event must
  equal (same canonical JSON) the live event at its seq. Missing, failing,
  divergent or longer storage withholds every view; the raw events are still
  returned. The proof is also capped at what the write path has confirmed
  (`PersistenceCoordinator.durable_length`): a line already in the file whose
  fsync has not returned — and may yet fail — is not durable, so its receipt
  must not show.
- **Detached** (the Session is cold): the stored log is durable by
  definition; views are computed from it through a non-live `Session`, and
  nothing is activated (no agent is published).

Stored logs are append-only, so a prefix verified for one live object stays
verified. `History` remembers its length per exact object (weakly) and, when
storage's cursor still equals it, answers without reading the log again; when
storage grew, it reads it and compares only the new events.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..host import Host
from ..session import Session, SessionEvent

__all__ = ["History", "PageRequest", "page_bounds"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PageRequest:
    """Which events a page holds: `from_seq` (seq ≥ N, oldest first), `before`
    (the `limit` events just below N), or neither (the last `limit`)."""

    from_seq: int | None = None
    before: int | None = None
    limit: int = 100

    def __post_init__(self) -> None:
        if self.from_seq is not None and self.before is not None:
            raise ValueError("a page is either from a seq or before a seq, not both")


def page_bounds(tail: int, request: PageRequest) -> tuple[int, int]:
    """The `[start, stop)` seqs of the page `request` selects in a log of `tail` events."""
    if request.from_seq is not None:
        start = min(request.from_seq, tail)
        return start, min(start + request.limit, tail)
    stop = tail if request.before is None else min(request.before, tail)
    return max(0, stop - request.limit), stop


class History:
    """Reads history pages from one Host (see the module docstring)."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self._verified: weakref.WeakKeyDictionary[Session, int] = weakref.WeakKeyDictionary()

    async def page(self, session_id: str, request: PageRequest) -> dict[str, Any]:
        """The page of `session_id`; raises the Host's `SessionNotFound` if it is unknown."""
        live = self._host.store.find(session_id)
        if live is not None:
            proven = await self.proven_prefix(live)
            return self._page(live, live.events, request, proven, attached=True)
        stored = await self._host.read_stored(session_id)
        durable = Session(stored.header, stored.events)
        return self._page(durable, durable.events, request, len(stored.events), attached=False)

    async def proven_prefix(self, session: Session) -> int:
        """How many leading events of live `session` storage proves; 0 withholds every view."""
        stored = await self._stored_prefix(session)
        return min(stored, self._host.coordinator.durable_length(session))

    async def _stored_prefix(self, session: Session) -> int:
        backend = self._host.backend
        known = self._verified.get(session)
        try:
            if known is not None and await backend.cursor(session.id) == known:
                return known
            stored = await backend.inspect(session.id)
        except Exception as error:
            log.warning("cannot verify stored history of %s: %s", session.id, error)
            return 0
        if stored is None:
            return 0
        count = len(stored.events)
        if count > len(session) or not stored.header.identity_equals(session.header):
            return 0
        start = known if known is not None and known <= count else 0
        if not _same_events(stored.events, session.events, start, count):
            return 0
        self._verified[session] = count
        return count

    def _page(
        self,
        session: Session,
        events: Sequence[SessionEvent],
        request: PageRequest,
        proven: int,
        *,
        attached: bool,
    ) -> dict[str, Any]:
        tail = len(events)
        start, stop = page_bounds(tail, request)
        page = events[start:stop]
        views: dict[str, Any] = {}
        for event in page:
            if event.seq >= proven:
                break
            view = self._host.event_view(session, event)
            if view is not None:
                views[str(event.seq)] = view
        return {
            "header": session.header.to_dict(),
            "events": [event.model_dump(mode="json") for event in page],
            "views": views,
            "attached": attached,
            "tail": tail,
        }


def _same_events(
    stored: Sequence[SessionEvent], live: Sequence[SessionEvent], start: int, stop: int
) -> bool:
    # Canonical JSON, not model equality: Python would call `true` equal to `1`.
    return all(stored[seq].to_json() == live[seq].to_json() for seq in range(start, stop))
