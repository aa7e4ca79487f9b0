"""`PostgresOutbox`: the outbox every host of one PostgreSQL store shares.

Tables in the Host's schema (`StorageLocation.schema`), on connections of
its own (`StorageLocation.url`; the URL may hold a password, so messages
name `redacted_url`):

- `notify_deliveries`: one row per delivery, keyed by `Delivery.key`; the
  message as JSON text; `state`, `attempts`, `next_at`, `error`, `created`,
  `updated`; the claim (`claimed_by`, `claimed_until`, epoch ms);
- `notify_counts`: `pruned`, the finished deliveries ever pruned;
- `notify_migrations`: the versions applied.

Rules (besides `OutboxBackend`'s):

1. `open()` migrates in one transaction under an advisory lock of its own
   for the schema: hosts that start at once wait for each other and the
   later ones find nothing to do; every statement is `IF NOT EXISTS`-safe.
2. A claim is one statement: `UPDATE … WHERE key IN (SELECT … FOR UPDATE
   SKIP LOCKED)`, so two hosts claiming at once take disjoint rows, and a
   row another host claimed is skipped until its `claimed_until` passed
   (`CLAIM_LEASE_MS`): a crashed host's deliveries go out from another host.
3. `settle` changes the row only while this host still holds its claim
   (`claimed_by`); a claim that expired and was taken over answers False.
4. Pruning runs in `refresh()` under a second advisory lock (one host at a
   time), deleting the oldest finished rows beyond `keep` and adding their
   number to `pruned` in the same statement.
5. One connection, used by one operation at a time; a connection that broke
   is opened again by the next operation. Times are the Host's clock (the
   lease absorbs a few seconds of skew between hosts).
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import psycopg
from psycopg import sql

from dsh import StorageError

from .backend import CLAIM_LEASE_MS, KEEP_FINISHED, Counts, OutboxBackend
from .delivery import Delivery

__all__ = ["MIGRATIONS", "PostgresOutbox"]

Connection = psycopg.AsyncConnection[Any]

_MIGRATE_LOCK = 0x6E746679  # "ntfy": (this, hashtext(schema)) for migrations
_PRUNE_LOCK = 0x6E747071  # "ntpq": (this, hashtext(schema)) for pruning
CONNECT_TIMEOUT = 10

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS notify_deliveries (
        key           text    PRIMARY KEY,
        channel       text    NOT NULL,
        target        text    NOT NULL,
        message       text    NOT NULL,
        state         text    NOT NULL,
        attempts      integer NOT NULL,
        next_at       bigint  NOT NULL,
        error         text,
        created       bigint  NOT NULL,
        updated       bigint  NOT NULL,
        claimed_by    text,
        claimed_until bigint
    );
    CREATE INDEX IF NOT EXISTS notify_deliveries_due
        ON notify_deliveries (channel, next_at) WHERE state = 'pending';
    CREATE INDEX IF NOT EXISTS notify_deliveries_finished
        ON notify_deliveries (updated) WHERE state <> 'pending';
    CREATE TABLE IF NOT EXISTS notify_counts (name text PRIMARY KEY, value bigint NOT NULL);
    """,
)

_COLUMNS = "channel, target, message, state, attempts, next_at, error, created, updated"

_ADD = f"""
INSERT INTO notify_deliveries (key, {_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (key) DO NOTHING
"""

_CLAIM = f"""
UPDATE notify_deliveries SET claimed_by = %(me)s, claimed_until = %(until)s
WHERE key IN (
    SELECT key FROM notify_deliveries
    WHERE state = 'pending' AND channel = %(channel)s AND next_at <= %(now)s
      AND (claimed_until IS NULL OR claimed_until <= %(now)s)
      AND NOT (target = ANY(%(skip)s::text[]))
    ORDER BY next_at, created, key LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED)
RETURNING {_COLUMNS}
"""

_SETTLE = """
UPDATE notify_deliveries
SET state = %s, attempts = %s, next_at = %s, error = %s, updated = %s,
    claimed_by = NULL, claimed_until = NULL
WHERE key = %s AND claimed_by = %s AND state = 'pending'
"""

_NEXT_DUE = """
SELECT min(greatest(next_at, coalesce(claimed_until, 0))) FROM notify_deliveries
WHERE state = 'pending' AND channel = ANY(%s::text[]) AND NOT (target = ANY(%s::text[]))
"""

_RECORDS = f"SELECT {_COLUMNS} FROM notify_deliveries ORDER BY created, key"

_COUNTS = """
SELECT count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'failed'),
       count(*) FILTER (WHERE state <> 'pending'),
       (SELECT coalesce(max(value), 0) FROM notify_counts WHERE name = 'pruned')
FROM notify_deliveries
"""

_PRUNE = """
WITH gone AS (
    DELETE FROM notify_deliveries WHERE key IN (
        SELECT key FROM notify_deliveries WHERE state <> 'pending'
        ORDER BY updated, key LIMIT %s)
    RETURNING 1)
INSERT INTO notify_counts AS c (name, value) SELECT 'pruned', count(*) FROM gone
ON CONFLICT (name) DO UPDATE SET value = c.value + EXCLUDED.value
"""


def _row(row: Sequence[Any]) -> Delivery:
    names = ("channel", "target", "message", "state", "attempts", "next_at", "error",
             "created", "updated")  # fmt: skip
    value = dict(zip(names, row, strict=True))
    value["message"] = json.loads(value["message"])
    return Delivery.from_json(value)


class PostgresOutbox(OutboxBackend):
    """Deliveries in tables every host of the store shares (see the module docstring)."""

    shared = True

    def __init__(
        self,
        url: str,
        schema: str,
        *,
        where: str,
        keep: int = KEEP_FINISHED,
        lease_ms: int = CLAIM_LEASE_MS,
    ) -> None:
        self._url = url
        self.schema = schema
        self.where = where
        self.description = f"the notify outbox in PostgreSQL at {where}"
        self.keep = keep
        self.lease_ms = lease_ms
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._connection: Connection | None = None
        self._lock = anyio.Lock()
        self._counts = Counts()

    async def open(self) -> None:
        async with self._use("could not be migrated") as connection:
            await _migrate(connection, self.schema)

    async def add(self, deliveries: Sequence[Delivery]) -> int:
        rows = [
            (d.key, d.channel, d.target, json.dumps(d.to_json()["message"]), d.state,
             d.attempts, d.next_at, d.error, d.created, d.updated)
            for d in deliveries
        ]  # fmt: skip
        added: list[Delivery] = []
        async with (
            self._use("could not keep deliveries") as connection,
            connection.transaction(),
            connection.cursor() as cursor,
        ):
            for delivery, row in zip(deliveries, rows, strict=True):
                await cursor.execute(_ADD, row)
                added.extend([delivery] * cursor.rowcount)
        counts = self._counts
        pending = sum(d.state == "pending" for d in added)
        failed = sum(d.state == "failed" for d in added)
        self._counts = Counts(counts.pending + pending, counts.failed + failed, counts.pruned)
        return len(added)

    async def claim(
        self, channel: str, now: int, limit: int, *, skip: Collection[str] = ()
    ) -> list[Delivery]:
        arguments = {
            "skip": list(skip),
            "me": self.owner,
            "until": now + self.lease_ms,
            "channel": channel,
            "now": now,
            "limit": limit,
        }
        async with self._use("could not claim deliveries") as connection:
            cursor = await connection.execute(_CLAIM, arguments)
            rows = await cursor.fetchall()
        return sorted((_row(row) for row in rows), key=lambda d: (d.next_at, d.created, d.key))

    async def settle(self, delivery: Delivery) -> bool:
        d = delivery
        arguments = (d.state, d.attempts, d.next_at, d.error, d.updated, d.key, self.owner)
        async with self._use("could not record a delivery") as connection:
            cursor = await connection.execute(_SETTLE, arguments)
            settled = cursor.rowcount == 1
        if settled and d.finished:
            pending, failed, pruned = self._counts.pending, self._counts.failed, self._counts.pruned
            self._counts = Counts(pending - 1, failed + (d.state == "failed"), pruned)
        return settled

    async def next_due(
        self, channels: Collection[str], *, skip: Collection[str] = ()
    ) -> int | None:
        async with self._use("could not read deliveries") as connection:
            due = await _scalar(connection, _NEXT_DUE, (list(channels), list(skip)))
        return None if due is None else int(due)

    async def records(self) -> list[Delivery]:
        async with self._use("could not read deliveries") as connection:
            cursor = await connection.execute(_RECORDS)
            rows = await cursor.fetchall()
        return [_row(row) for row in rows]

    @property
    def counts(self) -> Counts:
        return self._counts

    async def refresh(self) -> None:
        async with self._use("could not count deliveries") as connection:
            counts = await _count(connection)
            pruning = counts[2] - self.keep > self.keep // 4
            counts = await self._prune(connection) if pruning else counts
        self._counts = Counts(counts[0], counts[1], counts[3])

    async def _prune(self, connection: Connection) -> tuple[int, int, int, int]:
        """Delete the oldest finished rows beyond `keep` (rule 4); the counts after."""
        async with connection.transaction():
            await connection.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_PRUNE_LOCK, self.schema)
            )
            finished = (await _count(connection))[2]
            await connection.execute(_PRUNE, (max(finished - self.keep, 0),))
        return await _count(connection)

    async def aclose(self) -> None:
        async with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            with anyio.CancelScope(shield=True):
                await connection.close()

    @asynccontextmanager
    async def _use(self, doing: str) -> AsyncIterator[Connection]:
        """The connection, for one operation; psycopg's errors become `StorageError`s."""
        async with self._lock:
            try:
                if self._connection is None:
                    self._connection = await _connect(self._url, self.schema)
                yield self._connection
            except psycopg.Error as error:
                if self._connection is not None and self._connection.broken:
                    await self._connection.close()
                    self._connection = None
                first = (str(error).strip().splitlines() or [type(error).__name__])[0]
                raise StorageError(f"{self.description} {doing}: {first}") from error


async def _connect(url: str, schema: str) -> Connection:
    connection = await psycopg.AsyncConnection.connect(
        url, autocommit=True, connect_timeout=CONNECT_TIMEOUT
    )
    await connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
    return connection


async def _migrate(connection: Connection, schema: str) -> None:
    """Apply the missing `MIGRATIONS` (rule 1)."""
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_MIGRATE_LOCK, schema)
        )
        await connection.execute(
            sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
        )
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS notify_migrations"
            " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        applied = int(
            await _scalar(connection, "SELECT coalesce(max(version), 0) FROM notify_migrations")
        )
        for version, statements in enumerate(MIGRATIONS[applied:], start=applied + 1):
            await connection.execute(statements.encode())
            await connection.execute(
                "INSERT INTO notify_migrations (version) VALUES (%s)", (version,)
            )


async def _count(connection: Connection) -> tuple[int, int, int, int]:
    cursor = await connection.execute(_COUNTS)
    row = await cursor.fetchone()
    assert row is not None  # an aggregate always has a row
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])


async def _scalar(connection: Connection, query: str, arguments: Sequence[Any] = ()) -> Any:
    cursor = await connection.execute(query, arguments)
    row = await cursor.fetchone()
    assert row is not None  # an aggregate always has a row
    return row[0]
