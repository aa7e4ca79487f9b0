"""Keeping every `dsh web` out of a store while a command copies it (`dsh store copy`).

- **JSONL**: the data dir's `lock` (`DataDirLock`), held for the whole copy:
  a running `dsh web` makes the copy refuse, naming its PID, and a `dsh web`
  started during the copy refuses to start.
- **PostgreSQL**: hosts share the database and take no lock a command could
  take, so the copy asks who is there (`postgres_holders`) before it starts
  and once more when it is done: a valid lease names the host that holds a
  Session (`leases.owner`), and a connection listening on one of dsh's
  channels of this schema (`LISTEN "dsh_<kind>.<digest>"`, which every
  running `dsh web` keeps open) names a host holding no Session at all. A
  write to a Session another host leases is refused by the database anyway
  (`LeaseHeld`).

`StoreHeld` names the holders and says what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Iterator

from ...persistence.backend import Backend
from ...persistence.backends import BackendChoice
from ...persistence.errors import StorageError

__all__ = ["StoreHeld", "held_stores", "postgres_holders"]


class StoreHeld(StorageError):
    """A `dsh web` uses a store the command must have to itself."""


@contextlib.contextmanager
def held_stores(*choices: BackendChoice) -> Iterator[None]:
    """Hold the writer lock of every store of `choices` that has one, while inside.

    Raises `StoreHeld` naming the store and the holder's PID.
    """
    with contextlib.ExitStack() as stack:
        for choice in choices:
            lock = choice.writer_lock()
            if lock is None:
                continue
            try:
                lock.acquire()
            except StorageError as error:
                raise StoreHeld(f"{error}: stop it first") from error
            stack.callback(lock.release)
        yield


_LISTENERS = """
SELECT pid, coalesce(host(client_addr), 'a local socket'), query FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE %s
ORDER BY pid
"""


async def postgres_holders(backend: Backend) -> list[str]:
    """Who uses `backend`'s PostgreSQL schema now: one line per holder (empty: nobody).

    Any other backend (no PostgreSQL) has none.
    """
    postgres = sys.modules.get("dsh.persistence.postgres.backend")
    if postgres is None or not isinstance(backend, postgres.PostgresBackend):
        return []
    database = backend.database
    digest = hashlib.md5(database.settings.schema_name.encode()).hexdigest()[:16]
    found: list[str] = []
    async with database.connection() as connection:
        cursor = await connection.execute(
            "SELECT owner, count(*) FROM leases WHERE expires_at > clock_timestamp()"
            " GROUP BY owner ORDER BY owner"
        )
        for owner, count in await cursor.fetchall():
            found.append(f"the host {owner}, holding {count} Session{'s' * (count != 1)}")
        cursor = await connection.execute(_LISTENERS, (f'LISTEN "dsh\\_%.{digest}"',))
        listening: dict[str, list[int]] = {}
        for pid, where, _ in await cursor.fetchall():
            listening.setdefault(str(where), []).append(int(pid))
    for where, pids in sorted(listening.items()):
        numbers = ", ".join(str(pid) for pid in pids)
        found.append(f"a dsh web connected from {where} (server processes {numbers})")
    return found
