"""`PostgresWakeBackend`: the wake index of every host on one database, as the `wake` table.

One row per Session that needs waking (`wake_at`, epoch ms on the hosts'
clocks) or whose entry is dirty (it went live and has not gone cold
cleanly since; `dsh.wake.index` explains both). Unlike a JSONL index, this
one is *shared*: each host keeps its own in-memory `WakeIndex`, and the
table is what they agree on. So:

- **Writes are fenced by the lease.** An entry is written (or removed) only
  by the host that holds the Session's lease, or by anyone while no host
  holds one: a host that lost a Session cannot overwrite the dirty mark its
  new owner wrote on going live. A change refused that way is dropped
  silently (the owner's entry is the truth). Every write clears the claim.
- **`claim` decides who wakes a Session**, in one statement: it takes the
  row `FOR UPDATE SKIP LOCKED` and marks it claimed for the lease TTL, only
  while the entry needs waking, no other claim is current and no host holds
  a valid lease on the Session. Exactly one host wins; the winner then takes
  the lease (`Host.resume`), which decides for good.
- **`due` is the sweep** every host runs (`sweep_seconds`): the entries due
  before a horizon, and every dirty entry, of Sessions no host holds and no
  host has claimed. That is how a host learns of entries other hosts wrote
  after it started, and how a dead host's Sessions — their leases expired,
  their entries dirty or due — are taken over by a survivor.
- `load` reads every row (a failure is the database's `StorageError`);
  `replace` (`dsh index rebuild`) makes the table exactly the given entries
  in one transaction; `discard` is refused: a
  shared index cannot be given up by one host, so a write that failed fails
  the operation that waited for it (the Session does not go live).

Each call is one statement on a pooled connection of the Session store's
`Database` (the Host's backend's pool: the wake store opens none of its own,
except for `dsh index rebuild`, which has no Host before it, `owns_backend`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import psycopg

from ..persistence.errors import StorageError
from ..persistence.leases import DEFAULT_LEASE_TTL_SECONDS
from ..session.ids import validate_session_id
from .backend import Change, LoadedIndex, WakeBackend, WakeEntry
from .errors import WakeBackendError

if TYPE_CHECKING:
    from ..persistence.postgres.backend import PostgresBackend

__all__ = ["DUE_LIMIT", "SWEEP_SECONDS", "PostgresWakeBackend"]

SWEEP_SECONDS = 1.0
DUE_LIMIT = 1000  # entries one sweep hands over at most (the next sweep takes the rest)

# A valid lease of a host other than %(me)s (NULL: any valid lease at all).
_HELD_ELSEWHERE = """
    EXISTS (SELECT 1 FROM leases l WHERE l.session_id = {row}.session_id
            AND l.expires_at > clock_timestamp() AND l.owner IS DISTINCT FROM %(me)s)
"""

_WRITE = f"""
WITH changes AS (
    SELECT * FROM unnest(%(ids)s::text[], %(wake_at)s::bigint[], %(dirty)s::boolean[])
        AS c (session_id, wake_at, dirty)
), allowed AS (
    SELECT * FROM changes c WHERE NOT {_HELD_ELSEWHERE.format(row="c")}
), removed AS (
    DELETE FROM wake w USING allowed a
    WHERE w.session_id = a.session_id AND a.wake_at IS NULL AND NOT a.dirty
)
INSERT INTO wake AS w (session_id, wake_at, dirty)
SELECT session_id, wake_at, dirty FROM allowed WHERE wake_at IS NOT NULL OR dirty
ON CONFLICT (session_id) DO UPDATE SET
    wake_at = EXCLUDED.wake_at, dirty = EXCLUDED.dirty, claimed_by = NULL, claimed_until = NULL
"""

_CLAIM = """
UPDATE wake SET claimed_by = %(me)s,
    claimed_until = clock_timestamp() + make_interval(secs => %(ttl)s)
WHERE session_id = (
    SELECT w.session_id FROM wake w
    WHERE w.session_id = %(id)s AND (w.wake_at IS NOT NULL OR w.dirty)
      AND (w.claimed_until IS NULL OR w.claimed_until <= clock_timestamp())
      AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.session_id = w.session_id
                      AND l.expires_at > clock_timestamp())
    FOR UPDATE SKIP LOCKED
)
RETURNING session_id
"""

_DUE = """
SELECT w.session_id, w.wake_at, w.dirty FROM wake w
WHERE (w.dirty OR w.wake_at <= %(horizon)s)
  AND (w.claimed_until IS NULL OR w.claimed_until <= clock_timestamp())
  AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.session_id = w.session_id
                  AND l.expires_at > clock_timestamp())
ORDER BY w.wake_at NULLS FIRST, w.session_id
LIMIT %(limit)s
"""


class PostgresWakeBackend(WakeBackend):
    """The shared wake index of the hosts on `backend`'s database (module docstring)."""

    shared = True
    sweep_seconds: float | None = SWEEP_SECONDS

    def __init__(
        self,
        backend: PostgresBackend,
        *,
        sweep_seconds: float = SWEEP_SECONDS,
        owns_backend: bool = False,
    ) -> None:
        self.backend = backend
        self._owns_backend = owns_backend
        self.database = backend.database
        self.sweep_seconds = sweep_seconds
        self.description = f"the wake index in {backend.describe()}"

    def _owner(self) -> tuple[str | None, float]:
        """This host's name in leases (None: no Host took leases) and their TTL."""
        leases = self.backend.leases
        if leases is None:
            return None, DEFAULT_LEASE_TTL_SECONDS
        return leases.owner, leases.ttl or DEFAULT_LEASE_TTL_SECONDS

    def _failure(self, error: Exception, doing: str) -> WakeBackendError:
        if isinstance(error, StorageError):
            return WakeBackendError(f"cannot {doing} {self.description}: {error}")
        return WakeBackendError(
            f"cannot {doing} {self.description}: {self.database.failure(error)}"
        )

    async def load(self) -> LoadedIndex:
        # A shared index is never rebuilt by one host: a database that cannot be read
        # stops the start (a `StorageError` naming it), as the Session store would.
        async with self.database.connection() as connection:
            cursor = await connection.execute("SELECT session_id, wake_at, dirty FROM wake")
            rows = await cursor.fetchall()
        return LoadedIndex({str(sid): WakeEntry(at, bool(dirty)) for sid, at, dirty in rows})

    async def write(self, changes: Sequence[Change]) -> None:
        latest: dict[str, WakeEntry] = {}
        for session_id, entry in changes:
            validate_session_id(session_id)
            latest.pop(session_id, None)
            latest[session_id] = entry  # later ones win
        if not latest:
            return
        owner, _ = self._owner()
        params = {
            "me": owner,
            "ids": list(latest),
            "wake_at": [entry.wake_at for entry in latest.values()],
            "dirty": [entry.dirty for entry in latest.values()],
        }
        try:
            async with self.database.connection() as connection:
                await connection.execute(_WRITE, params)
        except (StorageError, psycopg.Error) as error:
            raise self._failure(error, "write") from error

    async def replace(self, entries: Mapping[str, WakeEntry]) -> None:
        kept = {key: entry for key, entry in entries.items() if not entry.empty}
        for session_id in kept:
            validate_session_id(session_id)
        try:
            async with self.database.connection() as connection, connection.transaction():
                await connection.execute("DELETE FROM wake")
                await connection.execute(
                    "INSERT INTO wake (session_id, wake_at, dirty)"
                    " SELECT * FROM unnest(%s::text[], %s::bigint[], %s::boolean[])",
                    (
                        list(kept),
                        [entry.wake_at for entry in kept.values()],
                        [entry.dirty for entry in kept.values()],
                    ),
                )
        except (StorageError, psycopg.Error) as error:
            raise self._failure(error, "replace") from error

    async def discard(self) -> None:
        raise WakeBackendError(
            f"{self.description} is shared by every host on the database; "
            "one host cannot give it up"
        )

    async def claim(self, session_id: str) -> bool:
        validate_session_id(session_id)
        owner, ttl = self._owner()
        try:
            async with self.database.connection() as connection:
                cursor = await connection.execute(
                    _CLAIM, {"me": owner or "a dsh command", "ttl": ttl, "id": session_id}
                )
                return await cursor.fetchone() is not None
        except (StorageError, psycopg.Error) as error:
            raise self._failure(error, "claim a Session in") from error

    async def due(self, horizon_ms: int) -> list[Change]:
        try:
            async with self.database.connection() as connection:
                cursor = await connection.execute(_DUE, {"horizon": horizon_ms, "limit": DUE_LIMIT})
                rows = await cursor.fetchall()
        except (StorageError, psycopg.Error) as error:
            raise self._failure(error, "sweep") from error
        return [(str(sid), WakeEntry(at, bool(dirty))) for sid, at, dirty in rows]

    async def aclose(self) -> None:
        """Close the backend's pool if this store made its own (the Host closes its)."""
        if self._owns_backend:
            await self.backend.aclose()
