"""Leases: which host may write a Session, with a fencing epoch (DESIGN §4).

A live Session has exactly one owning host. Ownership is a **lease** taken
from the store before the Session goes live (before its stored log is even
read, so the owner reads what every earlier owner wrote):

- `acquire(id)` yields a `Lease` with an **epoch** that is larger than the
  epoch of every earlier lease on that Session, or raises `LeaseHeld` naming
  the host that holds it and until when;
- the store's backend checks the holder's epoch in the same transaction as
  every write of the Session (`initialize`, `append`), so a host whose lease
  lapsed cannot store, and therefore never acknowledges, anything after it —
  that write raises `LeaseLost`;
- `renew(leases)` extends the leases a host still holds and reports the
  ones it lost (expired and taken over, or released by someone else);
- `release(lease)` ends a lease at once (a Session that closed normally), so
  another host may take it without waiting for the expiry.

Two kinds exist. `LocalLeases` serves one process: the JSONL store's data
directory lock already keeps every other writer out, so its leases never
expire (`ttl` is None) and need no renewal; it only keeps one lifecycle
per Session inside the process and numbers the epochs. The PostgreSQL
store's leases are rows with an expiry on the database's clock
(`dsh.persistence.postgres.leases`). The host side — acquire before going
live, renew in the Host's task group, close a Session whose lease is lost —
is the same for both (`dsh.host.leases.LeaseKeeper`).
"""

from __future__ import annotations

import abc
from collections.abc import Collection
from dataclasses import dataclass

from ..session.ids import validate_session_id
from .errors import LeaseHeld

__all__ = [
    "DEFAULT_LEASE_RENEW_SECONDS",
    "DEFAULT_LEASE_TTL_SECONDS",
    "MAX_LEASE_SECONDS",
    "Lease",
    "LeaseBackend",
    "LocalLeases",
]

DEFAULT_LEASE_TTL_SECONDS = 10.0
DEFAULT_LEASE_RENEW_SECONDS = 3.0
MAX_LEASE_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class Lease:
    """The right of `owner` to write Session `session_id`, fenced by `epoch`."""

    session_id: str
    owner: str
    epoch: int


class LeaseBackend(abc.ABC):
    """Where leases are kept (see the module docstring).

    `owner` is the name this store acquires leases under (one per Host).
    `ttl` is how long a lease lasts without renewal, in seconds, and None
    when leases never expire on their own.
    """

    owner: str
    ttl: float | None

    @abc.abstractmethod
    async def acquire(self, session_id: str) -> Lease:
        """Take the Session's lease for `owner`, with a new, larger epoch.

        Raises `LeaseHeld` while another owner's lease is valid (or this
        store already holds one), `InvalidSessionId`, `StorageError`.
        """

    @abc.abstractmethod
    async def renew(self, leases: Collection[Lease]) -> set[str]:
        """Extend `leases` by `ttl` from now; returns the ids of those still held.

        A lease missing from the answer is lost for good. Raises
        `StorageError` when storage cannot answer (then nothing is known).
        """

    @abc.abstractmethod
    async def release(self, lease: Lease) -> None:
        """End `lease` now (nothing if it is no longer held). Raises `StorageError`."""

    @abc.abstractmethod
    def held(self, session_id: str) -> Lease | None:
        """The lease this store holds on the Session, if any."""

    async def held_elsewhere(self, session_ids: Collection[str] | None = None) -> dict[str, str]:
        """Every Session (of `session_ids`, when given) another host holds a valid lease
        on, with that host's name (what makes it "live" in the API when it is not live
        here). Raises `StorageError`. The default: none (leases of one process)."""
        return {}

    @abc.abstractmethod
    def forget(self, lease: Lease) -> None:
        """Stop writing under `lease` at once, without asking storage (it was lost).

        Writes of its Session are refused with `LeaseLost` from now on; the
        lease itself expires on its own.
        """


class LocalLeases(LeaseBackend):
    """Leases inside one process (see the module docstring): they never expire."""

    ttl = None

    def __init__(self, owner: str = "this process") -> None:
        self.owner = owner
        self._held: dict[str, Lease] = {}
        self._epochs: dict[str, int] = {}

    async def acquire(self, session_id: str) -> Lease:
        validate_session_id(session_id)
        if session_id in self._held:
            raise LeaseHeld(session_id, self.owner, None)
        epoch = self._epochs.get(session_id, 0) + 1
        self._epochs[session_id] = epoch
        lease = self._held[session_id] = Lease(session_id, self.owner, epoch)
        return lease

    async def renew(self, leases: Collection[Lease]) -> set[str]:
        return {lease.session_id for lease in leases if self._held.get(lease.session_id) == lease}

    async def release(self, lease: Lease) -> None:
        self.forget(lease)

    def held(self, session_id: str) -> Lease | None:
        return self._held.get(session_id)

    def forget(self, lease: Lease) -> None:
        if self._held.get(lease.session_id) == lease:
            del self._held[lease.session_id]
