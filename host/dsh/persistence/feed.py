"""The event feed: hearing that another host stored events of a Session (DESIGN §9).

A store shared by several hosts gives its Hosts an `EventFeed`
(`Backend.event_feed()`): `listen` calls `woken(session_id)` whenever any
host committed events of that Session. It only wakes — the follower then
reads what is stored after what it already sent (`Backend.read`) — so a
live WebSocket on a host that does not own the Session streams exactly the
stored events, as a local watcher's sidecars show only durable ones.
Followers also poll every `poll_seconds`, for wake-ups missed while the
listening connection was down.
"""

from __future__ import annotations

import abc
from collections.abc import Callable

__all__ = ["EventFeed"]


class EventFeed(abc.ABC):
    """Wake-ups for stored events (see the module docstring)."""

    poll_seconds: float = 2.0

    @abc.abstractmethod
    async def listen(self, woken: Callable[[str], None]) -> None:
        """Call `woken(session_id)` after events of it were stored, until cancelled."""
