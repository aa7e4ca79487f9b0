"""`PostgresLeases`: Session leases as rows of the `leases` table.

Every expiry is computed on the database's clock (`clock_timestamp()`), so
the hosts' clocks never need to agree. Each call is one statement:

- `acquire` inserts the row, or takes it over when its lease expired or was
  released (`expires_at` in the past), always with `epoch + 1`; a valid
  lease of another owner is left alone and reported as `LeaseHeld`. Taking
  a row over waits for a write that holds it (`dsh_fence` locks it FOR
  SHARE), so a write the old owner committed is always visible to the new
  owner's reads.
- `renew` extends every still-valid lease of this owner, in one UPDATE,
  locking their rows in Session-id order (the order a round of appends
  fences them in, so the two never deadlock).
- `release` expires the lease now, keeping its row (epochs only grow).
- `held_elsewhere` lists the valid leases of other hosts (a Session live
  on some other host).

`held(id)` is what `PostgresBackend` fences its writes with; once a Host
uses these leases, a write of a Session without one is refused at once.
"""

from __future__ import annotations

from collections.abc import Collection

from ...session.ids import validate_session_id
from ..errors import LeaseHeld
from ..leases import DEFAULT_LEASE_TTL_SECONDS, MAX_LEASE_SECONDS, Lease, LeaseBackend
from .database import Database

__all__ = ["PostgresLeases"]

_ACQUIRE = """
INSERT INTO leases AS held (session_id, owner, epoch, acquired_at, expires_at)
VALUES (%(id)s, %(owner)s, 1, clock_timestamp(),
        clock_timestamp() + make_interval(secs => %(ttl)s))
ON CONFLICT (session_id) DO UPDATE SET
    owner = EXCLUDED.owner, epoch = held.epoch + 1,
    acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
WHERE held.expires_at <= clock_timestamp()
RETURNING epoch
"""

_HOLDER = """
SELECT owner, extract(epoch FROM expires_at - clock_timestamp())::float8
FROM leases WHERE session_id = %s
"""

# The rows are locked in Session-id order first (as a round of appends fences them:
# `rounds`), so a renewal and a round waiting for each other's rows cannot deadlock.
_RENEW = """
WITH mine AS (
    SELECT l.session_id FROM leases l
    JOIN unnest(%(ids)s::text[], %(epochs)s::bigint[]) AS w (session_id, epoch)
      ON l.session_id = w.session_id AND l.epoch = w.epoch
    WHERE l.owner = %(owner)s AND l.expires_at > clock_timestamp()
    ORDER BY l.session_id COLLATE "C"
    FOR UPDATE OF l
)
UPDATE leases SET expires_at = clock_timestamp() + make_interval(secs => %(ttl)s)
FROM mine WHERE leases.session_id = mine.session_id
RETURNING leases.session_id
"""

_RELEASE = """
UPDATE leases SET expires_at = clock_timestamp()
WHERE session_id = %s AND owner = %s AND epoch = %s AND expires_at > clock_timestamp()
"""


class PostgresLeases(LeaseBackend):
    """The leases of one host (`owner`) in one database (see the module docstring)."""

    def __init__(
        self, database: Database, owner: str, *, ttl: float = DEFAULT_LEASE_TTL_SECONDS
    ) -> None:
        if not 0 < ttl <= MAX_LEASE_SECONDS:
            raise ValueError(
                f"a lease lasts more than 0 and at most {MAX_LEASE_SECONDS:g} seconds, not {ttl}"
            )
        self.database = database
        self.owner = owner
        self.ttl = ttl
        self._held: dict[str, Lease] = {}

    async def acquire(self, session_id: str) -> Lease:
        validate_session_id(session_id)
        if session_id in self._held:
            raise LeaseHeld(session_id, self.owner, None)
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                _ACQUIRE, {"id": session_id, "owner": self.owner, "ttl": self.ttl}
            )
            row = await cursor.fetchone()
            if row is None:
                cursor = await connection.execute(_HOLDER, (session_id,))
                holder = await cursor.fetchone()
        if row is None:
            owner, left = holder if holder is not None else ("another host", None)
            raise LeaseHeld(session_id, str(owner), None if left is None else float(left))
        lease = self._held[session_id] = Lease(session_id, self.owner, int(row[0]))
        return lease

    async def renew(self, leases: Collection[Lease]) -> set[str]:
        mine = [lease for lease in leases if self._held.get(lease.session_id) == lease]
        if not mine:
            return set()
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                _RENEW,
                {
                    "ttl": self.ttl,
                    "owner": self.owner,
                    "ids": [lease.session_id for lease in mine],
                    "epochs": [lease.epoch for lease in mine],
                },
            )
            kept = {str(row[0]) for row in await cursor.fetchall()}
        for lease in mine:
            if lease.session_id not in kept:
                self.forget(lease)
        return kept

    async def release(self, lease: Lease) -> None:
        if self._held.get(lease.session_id) != lease:
            return
        self.forget(lease)
        async with self.database.connection() as connection:
            await connection.execute(_RELEASE, (lease.session_id, lease.owner, lease.epoch))

    async def held_elsewhere(self, session_ids: Collection[str] | None = None) -> dict[str, str]:
        wanted = None if session_ids is None else list(session_ids)
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                "SELECT session_id, owner FROM leases"
                " WHERE expires_at > clock_timestamp() AND owner <> %s"
                " AND (%s::text[] IS NULL OR session_id = ANY(%s::text[]))",
                (self.owner, wanted, wanted),
            )
            return {str(sid): str(owner) for sid, owner in await cursor.fetchall()}

    def held(self, session_id: str) -> Lease | None:
        return self._held.get(session_id)

    def forget(self, lease: Lease) -> None:
        if self._held.get(lease.session_id) == lease:
            del self._held[lease.session_id]
