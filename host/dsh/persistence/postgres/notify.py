"""LISTEN on one channel of dsh's schema, with its own connection, reconnecting.

Channels are database-wide, so each is named after the schema
(`channel(kind, schema)`: `dsh_<kind>.` and a digest of the schema name,
short enough for any schema): hosts on other schemas of one database never
hear each other. A notification only wakes; what it is about is read from
the tables, and a wake-up missed while the connection was down is made up
for by the listener's owner polling.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

import anyio
import psycopg
from psycopg import sql

from ...base.backoff import Backoff
from ..errors import StorageError
from .database import Database

__all__ = ["Listener", "channel"]

log = logging.getLogger(__name__)

#: A lost LISTEN connection is made again after 0.5 s, then waits that double up to 10 s.
RECONNECT = Backoff(first=0.5, cap=10.0)


def channel(kind: str, schema: str) -> str:
    """The channel of `kind` notifications for dsh's `schema` (the same in SQL:
    `'dsh_' || kind || '.' || left(md5(schema), 16)`)."""
    return f"dsh_{kind}.{hashlib.md5(schema.encode()).hexdigest()[:16]}"


class Listener:
    """Calls `woken(payload)` for every notification on `name`, while `listen` runs."""

    def __init__(self, database: Database, name: str, what: str) -> None:
        self.database = database
        self.name = name
        self.what = what  # for messages: "inbox", "events"
        self.listening = 0  # connections in LISTEN now

    async def listen(self, woken: Callable[[str], None]) -> None:
        """Until cancelled; reconnects after a failure with a growing delay."""
        failures = 0
        while True:
            delay = RECONNECT.delay(failures)
            try:
                connection = await self.database.connect()
            except StorageError as error:
                log.warning("%s: %s; listening again in %g s", self.what, error, delay)
                await anyio.sleep(delay)
                failures += 1
                continue
            try:
                await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.name)))
                failures = 0
                delay = RECONNECT.delay(failures)
                self.listening += 1
                try:
                    async for notification in connection.notifies():
                        woken(notification.payload)
                finally:
                    self.listening -= 1
            except psycopg.Error as error:
                log.warning(
                    "%s: listening on %s stopped (%s); again in %g s",
                    self.what,
                    self.database.where,
                    self.database.failure(error),
                    delay,
                )
            finally:
                with anyio.CancelScope(shield=True):
                    await connection.close()
            await anyio.sleep(delay)
            failures += 1
