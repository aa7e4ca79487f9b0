"""`OutboxBackend`: where deliveries wait until their channel accepted them.

The contract every backend keeps (the contract suite in
`tests/notify/outbox_contract.py` checks each one):

1. `add(deliveries)` returns once they are durable (or raises
   `dsh.StorageError`, having kept none of them it reports as added). A key
   already kept (`Delivery.key`) is left as it is: the alert feed may hand an
   alert over twice, and a delivery done must stay done. Each new one is
   kept as given, in whatever state: the recorder adds pending ones, `dsh
   store copy` (`copy.py`) finished ones too, with their attempts, times
   and last error. `counts` follows their states.
2. `claim(channel, now, limit, skip=targets)` takes at most `limit` pending
   deliveries of `channel` due at `now` (epoch ms), earliest first, that
   nobody holds and whose target is not in `skip`, and
   holds them for this backend until they are settled — or, on a backend
   several hosts share, until the claim's lease runs out (a crashed host's
   claims expire, `CLAIM_LEASE_MS`). Two claimants never hold one delivery.
3. `settle(delivery)` records what became of a claimed delivery (its
   `moved()` self) and releases it. It returns False, changing nothing, when
   the claim was lost (expired and taken by another host, or never held):
   the caller must not count it as its own.
4. Finished deliveries (`done`, `failed`, `gone`) are bounded: beyond
   `keep` of them the oldest (by `updated`) are pruned, and `counts.pruned`
   says how many ever were. Pending deliveries are never pruned.
5. `counts` answers from memory (`/api/health` reads it): exact for a
   backend of one host; for a shared one, as of the last `refresh()`.
6. `next_due(channels, skip=targets)` is the earliest `next_at` of a
   pending delivery of those channels, to a target not in `skip`, that could
   be claimed (None: none), so the sender sleeps until then.
7. `records()` is every delivery kept, in every state, claims left out (a
   claimed delivery is read as the pending one it is), ordered by `created`
   then key: what `dsh store copy` moves.

A backend of one host (memory, the JSONL file) holds its claims in memory:
a restart finds every pending delivery unclaimed, which is how the outbox
resumes.
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .delivery import Delivery

__all__ = ["CLAIM_LEASE_MS", "KEEP_FINISHED", "Counts", "OutboxBackend"]

#: How long a shared backend's claim holds: far longer than a send may take
#: (the sender gives up on one after `SEND_TIMEOUT`), short enough that a
#: crashed host's deliveries go out again within minutes.
CLAIM_LEASE_MS = 5 * 60 * 1000

#: Finished deliveries kept for the record (rule 4).
KEEP_FINISHED = 1000


@dataclass(frozen=True, slots=True)
class Counts:
    """Deliveries pending and failed now, and how many finished ones were pruned."""

    pending: int = 0
    failed: int = 0
    pruned: int = 0


class OutboxBackend(abc.ABC):
    """Deliveries until their channel accepted them (see the module docstring)."""

    #: True when several hosts share it: the sender then looks for work now and then.
    shared: bool = False
    description: str = "the notify outbox"

    async def open(self) -> None:
        """Load or prepare what is kept; `dsh.StorageError` if it cannot be."""
        return None

    @abc.abstractmethod
    async def add(self, deliveries: Sequence[Delivery]) -> int:
        """Keep `deliveries` (rule 1); how many were new."""

    @abc.abstractmethod
    async def claim(
        self, channel: str, now: int, limit: int, *, skip: Collection[str] = ()
    ) -> list[Delivery]:
        """Hold up to `limit` due deliveries of `channel`, none to a target in `skip` (rule 2)."""

    @abc.abstractmethod
    async def settle(self, delivery: Delivery) -> bool:
        """Record a claimed delivery's new state and release it (rule 3)."""

    @abc.abstractmethod
    async def next_due(
        self, channels: Collection[str], *, skip: Collection[str] = ()
    ) -> int | None:
        """When the next delivery of `channels` may be claimed (rule 6)."""

    @abc.abstractmethod
    async def records(self) -> list[Delivery]:
        """Every delivery kept (rule 7)."""

    @property
    @abc.abstractmethod
    def counts(self) -> Counts:
        """Pending, failed and pruned, from memory (rule 5)."""

    async def refresh(self) -> None:
        """Read `counts` afresh (a shared backend); a backend of one host knows them."""
        return None

    async def aclose(self) -> None:
        """Release what is open; a claim held is released by its lease or the process end."""
        return None
