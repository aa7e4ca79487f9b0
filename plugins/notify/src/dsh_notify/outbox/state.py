"""`OutboxState`: the deliveries of one host's outbox, in memory.

The memory backend is this state alone; the JSONL backend keeps it in step
with its file (it changes the state only once the file has the change).
Claims live here and nowhere else: one process owns the data dir, and a
restart begins with none, so every pending delivery is claimable again.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Sequence

from .backend import KEEP_FINISHED, Counts, OutboxBackend
from .delivery import Delivery

__all__ = ["OutboxState", "StateOutbox"]


class OutboxState:
    """Deliveries by key, the claimed keys, and the pruned count."""

    def __init__(self, keep: int = KEEP_FINISHED) -> None:
        self.keep = keep
        self.deliveries: dict[str, Delivery] = {}
        self.claimed: set[str] = set()
        self.pruned = 0
        self._pending = 0
        self._failed = 0
        self._finished = 0

    @property
    def counts(self) -> Counts:
        return Counts(self._pending, self._failed, self.pruned)

    def new(self, deliveries: Sequence[Delivery]) -> list[Delivery]:
        """Those of `deliveries` not kept yet (the first of a key given twice)."""
        seen: set[str] = set()
        fresh = []
        for delivery in deliveries:
            key = delivery.key
            if key not in self.deliveries and key not in seen:
                seen.add(key)
                fresh.append(delivery)
        return fresh

    def records(self) -> list[Delivery]:
        """Every delivery kept, by `created` then key."""
        return sorted(self.deliveries.values(), key=lambda d: (d.created, d.key))

    def put(self, delivery: Delivery) -> None:
        """Keep `delivery` under its key, replacing what was there."""
        old = self.deliveries.get(delivery.key)
        if old is not None:
            self._count(old, -1)
        self.deliveries[delivery.key] = delivery
        self._count(delivery, +1)

    def _count(self, delivery: Delivery, step: int) -> None:
        if delivery.state == "pending":
            self._pending += step
        else:
            self._finished += step
            if delivery.state == "failed":
                self._failed += step

    def claim(
        self, channel: str, now: int, limit: int, skip: Collection[str] = ()
    ) -> list[Delivery]:
        due = (
            delivery
            for key, delivery in self.deliveries.items()
            if delivery.state == "pending"
            and delivery.channel == channel
            and delivery.next_at <= now
            and key not in self.claimed
            and delivery.target not in skip
        )
        taken = heapq.nsmallest(limit, due, key=lambda d: (d.next_at, d.created, d.key))
        self.claimed.update(delivery.key for delivery in taken)
        return taken

    def settles(self, delivery: Delivery) -> bool:
        """Whether `delivery` is held by a claim (so it may be settled)."""
        return delivery.key in self.claimed

    def settle(self, delivery: Delivery) -> None:
        self.claimed.discard(delivery.key)
        self.put(delivery)

    def next_due(self, channels: Collection[str], skip: Collection[str] = ()) -> int | None:
        due = [
            delivery.next_at
            for key, delivery in self.deliveries.items()
            if delivery.state == "pending"
            and delivery.channel in channels
            and key not in self.claimed
            and delivery.target not in skip
        ]
        return min(due, default=None)

    def over(self, slack: int = 0) -> bool:
        """More finished deliveries than `keep` (+ `slack`) are kept."""
        return self._finished > self.keep + slack

    def prune(self) -> int:
        """Drop the oldest finished deliveries beyond `keep`; how many went."""
        extra = self._finished - self.keep
        if extra <= 0:
            return 0
        finished = (d for d in self.deliveries.values() if d.finished)
        for delivery in heapq.nsmallest(extra, finished, key=lambda d: (d.updated, d.key)):
            del self.deliveries[delivery.key]
            self._count(delivery, -1)
        self.pruned += extra
        return extra


class StateOutbox(OutboxBackend):
    """An outbox whose truth, while open, is an `OutboxState` in this process (the memory
    and JSONL outboxes): what it answers from that state, shared."""

    state: OutboxState

    async def claim(
        self, channel: str, now: int, limit: int, *, skip: Collection[str] = ()
    ) -> list[Delivery]:
        return self.state.claim(channel, now, limit, skip)

    async def next_due(
        self, channels: Collection[str], *, skip: Collection[str] = ()
    ) -> int | None:
        return self.state.next_due(channels, skip)

    async def records(self) -> list[Delivery]:
        return self.state.records()

    @property
    def counts(self) -> Counts:
        return self.state.counts
