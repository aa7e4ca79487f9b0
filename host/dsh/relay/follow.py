"""`StoredFollowers`: waiting for another host to store events of a Session.

With a store shared by several hosts (`Backend.event_feed()`), the Host
runs the feed's listener in its task group and hands each wake-up to
whoever waits for that Session (`changed`): the live stream of a Session
that is live on another host (`dsh.web.live.LiveHub.follow`) reads what was
stored after what it sent. A waiter also wakes after `poll_seconds`, for a
wake-up lost while the listener was reconnecting.
"""

from __future__ import annotations

import anyio

from ..persistence.feed import EventFeed

__all__ = ["StoredFollowers"]


class StoredFollowers:
    """Wake-ups of stored events, by Session id (see the module docstring)."""

    def __init__(self, feed: EventFeed) -> None:
        self.feed = feed
        self._waiting: dict[str, set[anyio.Event]] = {}

    async def run(self) -> None:
        """Listen until cancelled (in the Host's task group)."""
        await self.feed.listen(self.woken)

    def woken(self, session_id: str) -> None:
        for event in self._waiting.pop(session_id, ()):
            event.set()

    async def changed(self, session_id: str) -> None:
        """Return once events of `session_id` were stored, or after `poll_seconds`."""
        event = anyio.Event()
        waiting = self._waiting.setdefault(session_id, set())
        waiting.add(event)
        try:
            with anyio.move_on_after(self.feed.poll_seconds):
                await event.wait()
        finally:
            waiting.discard(event)
            if not waiting and self._waiting.get(session_id) is waiting:
                del self._waiting[session_id]
