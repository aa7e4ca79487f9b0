"""`PostgresEventFeed`: the `events` notifications the `sessions` trigger sends.

Migration 4 adds a trigger on `sessions`: whenever a row is created or its
`length` changes — inside the transaction of `dsh_create` / `dsh_append` —
it calls `pg_notify` on the schema's `events` channel with the Session id,
so a notification is delivered once (and only if) the events are committed.
"""

from __future__ import annotations

from collections.abc import Callable

from ..feed import EventFeed
from .database import Database
from .notify import Listener, channel

__all__ = ["PostgresEventFeed"]


class PostgresEventFeed(EventFeed):
    """Wake-ups for events stored by any host on the database."""

    def __init__(self, database: Database) -> None:
        self._listener = Listener(
            database, channel("events", database.settings.schema_name), "events"
        )

    @property
    def listening(self) -> int:
        return self._listener.listening

    async def listen(self, woken: Callable[[str], None]) -> None:
        await self._listener.listen(woken)
