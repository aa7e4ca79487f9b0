"""`PostgresInbox`: messages for a Session another host owns, as rows of the `inbox` table.

`post` inserts the row and calls `pg_notify` in the same statement, so the
notification is sent when (and only if) the row is committed; it carries
the Session id only, on the schema's `inbox` channel (`notify.channel`).
`listen` keeps one connection of its own in LISTEN (`notify.Listener`,
reconnecting); a wake-up missed meanwhile is made up for by the relay's
polling (`waiting`, `orphaned`), because the rows are the truth.

A message is kept as a JSON string (`message`, schema version 8), so it
arrives exactly as posted whatever it holds (a `text` column refuses NUL);
a row an older host posted has its `text` instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from ...session.ids import validate_session_id
from ..inbox import Inbox, InboxMessage
from .notify import Listener, channel

if TYPE_CHECKING:
    from .database import Database

__all__ = ["PostgresInbox"]

_POST = """
WITH posted AS (
    INSERT INTO inbox (session_id, message, time_zone, via) VALUES (%s, %s, %s, %s)
    RETURNING id, session_id
)
SELECT id, pg_notify(%s, session_id) FROM posted
"""

_ORPHANED = """
SELECT DISTINCT i.session_id FROM inbox i
WHERE NOT EXISTS (SELECT 1 FROM leases l WHERE l.session_id = i.session_id
                  AND l.expires_at > clock_timestamp())
ORDER BY i.session_id
"""


class PostgresInbox(Inbox):
    """The inbox of the hosts on one database (module docstring)."""

    def __init__(self, database: Database, *, poll_seconds: float = 1.0) -> None:
        self.database = database
        self.poll_seconds = poll_seconds
        self.channel = channel("inbox", database.settings.schema_name)
        self._listener = Listener(database, self.channel, "inbox")

    async def post(self, session_id: str, text: str, time_zone: str | None, via: str) -> int:
        validate_session_id(session_id)
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                _POST, (session_id, json.dumps(text), time_zone, via, self.channel)
            )
            row = await cursor.fetchone()
        assert row is not None  # an INSERT … RETURNING returns its row
        return int(row[0])

    async def pending(self, session_id: str) -> list[InboxMessage]:
        validate_session_id(session_id)
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                "SELECT id, message, text, time_zone, via FROM inbox WHERE session_id = %s"
                " ORDER BY id",
                (session_id,),
            )
            rows = await cursor.fetchall()
        return [
            InboxMessage(int(key), session_id, _posted(message, text), zone, via)
            for key, message, text, zone, via in rows
        ]

    async def waiting(self, session_ids: Collection[str]) -> set[str]:
        if not session_ids:
            return set()
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                "SELECT DISTINCT session_id FROM inbox WHERE session_id = ANY(%s::text[])",
                (list(session_ids),),
            )
            return {str(row[0]) for row in await cursor.fetchall()}

    async def remove(self, ids: Collection[int]) -> None:
        if not ids:
            return
        async with self.database.connection() as connection:
            await connection.execute(
                "DELETE FROM inbox WHERE id = ANY(%s::bigint[])", (sorted(ids),)
            )

    async def orphaned(self) -> list[str]:
        async with self.database.connection() as connection:
            cursor = await connection.execute(_ORPHANED)
            return [str(row[0]) for row in await cursor.fetchall()]

    async def listen(self, woken: Callable[[str], None]) -> None:
        await self._listener.listen(woken)

    @property
    def listening(self) -> int:
        """Connections in LISTEN for the inbox now."""
        return self._listener.listening


def _posted(message: str | None, text: str) -> str:
    """The posted text: the JSON string this version writes, or an older host's `text`."""
    if message is None:
        return text
    posted: str = json.loads(message)
    return posted
