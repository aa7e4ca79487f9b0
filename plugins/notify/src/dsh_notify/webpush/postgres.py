"""`PostgresRecords`: the VAPID keys and the subscriptions in the Host's PostgreSQL schema.

Two tables in `StorageLocation.schema`, made on first open (under a
transaction-scoped advisory lock, so two hosts starting at once do not race
on `CREATE TABLE IF NOT EXISTS`):

- `notify_vapid (id = 1, record jsonb)`: one row. `keys()` inserts a fresh
  pair if there is none (`ON CONFLICT DO NOTHING`), then reads the row: of
  two hosts starting at once one insert wins and both read its pair.
- `notify_push_subscriptions (id, endpoint unique, p256dh, auth, created)`:
  `add` locks the table against other writers (`SHARE ROW EXCLUSIVE`), so
  the limit holds across hosts, then updates the row of that endpoint or
  inserts a new one.

Each call opens its own connection (psycopg, `StorageLocation.url`) and
closes it: these calls are rare (a subscription, a key at start-up, one
look-up per push sent). A connection or query failure raises
`dsh.StorageError` naming the redacted URL, never the password.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from dsh import StorageError, StorageLocation

from .keys import VapidKeys
from .subscriptions import Subscription, SubscriptionBody, TooManySubscriptions, new_id

__all__ = ["PostgresRecords"]

_LOCK = 0x64736E76  # "dsnv": this plugin's advisory lock for making its tables


class PostgresRecords:
    """The records of the module docstring, in `location`'s database and schema."""

    def __init__(self, location: StorageLocation) -> None:
        if location.url is None:
            raise ValueError("a PostgreSQL storage location needs a url")
        self._url = location.url
        self._where = location.redacted_url
        schema = location.schema or "public"
        self._vapid = sql.Identifier(schema, "notify_vapid")
        self._subscriptions = sql.Identifier(schema, "notify_push_subscriptions")

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        try:
            async with (
                await psycopg.AsyncConnection.connect(self._url) as connection,
                connection.transaction(),
            ):
                yield connection
        except psycopg.Error as problem:
            raise StorageError(
                f"Web Push records in {self._where}: {type(problem).__name__}: {problem}"
            ) from None

    async def create(self) -> None:
        """Make the two tables if they do not exist yet."""
        async with self._transaction() as connection:
            await connection.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            await connection.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    "id integer PRIMARY KEY CHECK (id = 1), record jsonb NOT NULL)"
                ).format(self._vapid)
            )
            await connection.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    "id text PRIMARY KEY, endpoint text NOT NULL UNIQUE, "
                    "p256dh text NOT NULL, auth text NOT NULL, "
                    "created timestamptz NOT NULL DEFAULT now())"
                ).format(self._subscriptions)
            )

    async def keys(self) -> VapidKeys:
        """The kept pair, made by whichever host asked first. `StorageError` if unreadable."""
        return await self.keep_keys(VapidKeys.new())

    async def keep_keys(self, keys: VapidKeys) -> VapidKeys:
        """Keep `keys` unless a pair is kept; the pair kept now. `StorageError` if unreadable."""
        async with self._transaction() as connection:
            await connection.execute(
                sql.SQL("INSERT INTO {} (id, record) VALUES (1, %s) ON CONFLICT DO NOTHING").format(
                    self._vapid
                ),
                (Jsonb(keys.to_record()),),
            )
            record = await self._record(connection)
        assert record is not None  # inserted above or already there; rows are never deleted
        return self._parse(record)

    async def kept_keys(self) -> VapidKeys | None:
        """The kept pair, None when there is none. `StorageError` if unreadable."""
        async with self._transaction() as connection:
            record = await self._record(connection)
        return None if record is None else self._parse(record)

    async def _record(self, connection: psycopg.AsyncConnection[Any]) -> object | None:
        cursor = await connection.execute(
            sql.SQL("SELECT record FROM {} WHERE id = 1").format(self._vapid)
        )
        row = await cursor.fetchone()
        return None if row is None else row[0]

    def _parse(self, record: object) -> VapidKeys:
        try:
            return VapidKeys.from_record(record)
        except ValueError as problem:
            raise StorageError(
                f"the Web Push key pair in {self._where} is unreadable ({problem})"
            ) from None

    async def all(self) -> Sequence[Subscription]:
        async with self._transaction() as connection:
            cursor = await connection.execute(
                sql.SQL("SELECT id, endpoint, p256dh, auth FROM {} ORDER BY created, id").format(
                    self._subscriptions
                )
            )
            rows = await cursor.fetchall()
        return [Subscription(*map(str, row)) for row in rows]

    async def get(self, subscription_id: str) -> Subscription | None:
        async with self._transaction() as connection:
            cursor = await connection.execute(
                sql.SQL("SELECT id, endpoint, p256dh, auth FROM {} WHERE id = %s").format(
                    self._subscriptions
                ),
                (subscription_id,),
            )
            row = await cursor.fetchone()
        return None if row is None else Subscription(*map(str, row))

    async def add(self, body: SubscriptionBody, limit: int) -> str:
        async with self._transaction() as connection:
            await connection.execute(
                sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(self._subscriptions)
            )
            cursor = await connection.execute(
                sql.SQL(
                    "UPDATE {} SET p256dh = %s, auth = %s WHERE endpoint = %s RETURNING id"
                ).format(self._subscriptions),
                (body.keys.p256dh, body.keys.auth, body.endpoint),
            )
            row = await cursor.fetchone()
            if row is not None:
                return str(row[0])
            cursor = await connection.execute(
                sql.SQL("SELECT count(*) FROM {}").format(self._subscriptions)
            )
            counted = await cursor.fetchone()
            assert counted is not None  # count(*) always answers one row
            if counted[0] >= limit:
                raise TooManySubscriptions(limit)
            subscription_id = new_id()
            await connection.execute(
                sql.SQL(
                    "INSERT INTO {} (id, endpoint, p256dh, auth) VALUES (%s, %s, %s, %s)"
                ).format(self._subscriptions),
                (subscription_id, body.endpoint, body.keys.p256dh, body.keys.auth),
            )
        return subscription_id

    async def keep(self, subscriptions: Sequence[Subscription]) -> int:
        """Keep each of `subscriptions` whose endpoint (and id) is not kept yet, as it is.

        No limit: `dsh store copy` moves subscriptions another store accepted. How many were kept.
        """
        added = 0
        async with self._transaction() as connection:
            for it in subscriptions:
                cursor = await connection.execute(
                    sql.SQL(
                        "INSERT INTO {} (id, endpoint, p256dh, auth) VALUES (%s, %s, %s, %s)"
                        " ON CONFLICT DO NOTHING"
                    ).format(self._subscriptions),
                    (it.id, it.endpoint, it.p256dh, it.auth),
                )
                added += cursor.rowcount
        return added

    async def remove(self, subscription_id: str) -> bool:
        async with self._transaction() as connection:
            cursor = await connection.execute(
                sql.SQL("DELETE FROM {} WHERE id = %s").format(self._subscriptions),
                (subscription_id,),
            )
        return cursor.rowcount > 0
