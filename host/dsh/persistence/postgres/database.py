"""One host's connections to the PostgreSQL store: a pool, opened on first use.

`Database` opens psycopg's async pool lazily, the first time anything needs
a connection: it first connects once on its own, so that an unreachable
server or a missing database is one clear `StorageError` naming the URL
without its password (`redacted`), and brings the schema up to date
(`schema.migrate`, safe when several hosts start at once). Every pooled
connection works in autocommit mode with `search_path` set to dsh's
schema; each write is a single statement, hence its own transaction.

`failure(error)` is the one translation of a psycopg error into the
message a person reads.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from ..errors import SchemaTooNew, StorageError
from .schema import migrate
from .settings import PostgresSettings

__all__ = ["CONNECT_TIMEOUT", "Connection", "Database"]

log = logging.getLogger(__name__)

Connection = psycopg.AsyncConnection[Any]
CONNECT_TIMEOUT = 10.0


class Database:
    """The pool of one backend (see the module docstring)."""

    def __init__(self, settings: PostgresSettings, *, connect_timeout: float = CONNECT_TIMEOUT):
        self.settings = settings
        self.connect_timeout = connect_timeout
        self.migrated: tuple[int, int] | None = None  # (before, after) once ready
        self._pool: AsyncConnectionPool[Connection] | None = None
        self._opening = anyio.Lock()

    @property
    def where(self) -> str:
        return self.settings.describe()

    def failure(self, error: BaseException, doing: str = "") -> StorageError:
        """A `StorageError` for `error`, naming the store (and what was being done)."""
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        if isinstance(error, psycopg.OperationalError) and "does not exist" in first:
            first += f" (create it first: createdb {self.settings.database})"
        what = f" {doing}" if doing else ""
        return StorageError(f"PostgreSQL at {self.where}{what}: {first}")

    async def connect(self) -> Connection:
        """One new connection of our own (not pooled), in autocommit mode."""
        try:
            with anyio.fail_after(self.connect_timeout + 1):
                return await psycopg.AsyncConnection.connect(
                    self.settings.url,
                    autocommit=True,
                    connect_timeout=max(1, round(self.connect_timeout)),
                )
        except TimeoutError as error:
            raise StorageError(
                f"PostgreSQL at {self.where}: no answer within {self.connect_timeout:g} s"
            ) from error
        except psycopg.Error as error:
            raise self.failure(error, "cannot be reached") from error

    async def prepare(self) -> tuple[int, int]:
        """Connect and migrate (see `schema.migrate`); returns (version before, after)."""
        connection = await self.connect()
        try:
            return await migrate(connection, self.settings.schema_name)
        except SchemaTooNew as error:
            raise StorageError(f"PostgreSQL at {self.where}: {error}") from error
        except psycopg.Error as error:
            raise self.failure(error, "could not be migrated") from error
        finally:
            await connection.close()

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A pooled connection for one operation; psycopg errors become `StorageError`s
        (an error the caller raised for itself passes unchanged)."""
        pool = self._pool or await self._open()
        try:
            async with pool.connection(timeout=self.connect_timeout) as connection:
                yield connection
        except psycopg.Error as error:  # a PoolTimeout too
            raise self.failure(error) from error

    async def _open(self) -> AsyncConnectionPool[Connection]:
        async with self._opening:
            if self._pool is None:
                self.migrated = await self.prepare()
                pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
                    self.settings.url,
                    min_size=1,
                    max_size=self.settings.pool_size,
                    kwargs={"autocommit": True},
                    configure=self._configure,
                    open=False,
                    name=f"dsh {self.where}",
                )
                try:
                    await pool.open(wait=True, timeout=self.connect_timeout)
                except Exception as error:
                    await pool.close()
                    raise self.failure(error, "cannot be reached") from error
                self._pool = pool
            return self._pool

    async def _configure(self, connection: Connection) -> None:
        schema = sql.Identifier(self.settings.schema_name)
        await connection.execute(sql.SQL("SET search_path TO {}").format(schema))

    async def aclose(self) -> None:
        """Close the pool; the next use opens it again."""
        async with self._opening:
            pool, self._pool = self._pool, None
        if pool is not None:
            with anyio.CancelScope(shield=True):
                await pool.close()
