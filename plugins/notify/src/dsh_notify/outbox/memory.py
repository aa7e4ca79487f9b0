"""`MemoryOutbox`: an outbox that lives as long as the process (the `memory:` store, tests)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .backend import KEEP_FINISHED, Counts, OutboxBackend
from .delivery import Delivery
from .state import OutboxState

__all__ = ["MemoryOutbox"]


class MemoryOutbox(OutboxBackend):
    """Deliveries in memory only: nothing outlives the process, as with the Sessions."""

    description = "the notify outbox in memory"

    def __init__(self, *, keep: int = KEEP_FINISHED) -> None:
        self.state = OutboxState(keep)

    async def add(self, deliveries: Sequence[Delivery]) -> int:
        fresh = self.state.new(deliveries)
        for delivery in fresh:
            self.state.put(delivery)
        return len(fresh)

    async def claim(
        self, channel: str, now: int, limit: int, *, skip: Collection[str] = ()
    ) -> list[Delivery]:
        return self.state.claim(channel, now, limit, skip)

    async def settle(self, delivery: Delivery) -> bool:
        if not self.state.settles(delivery):
            return False
        self.state.settle(delivery)
        self.state.prune()
        return True

    async def next_due(
        self, channels: Collection[str], *, skip: Collection[str] = ()
    ) -> int | None:
        return self.state.next_due(channels, skip)

    async def records(self) -> list[Delivery]:
        return self.state.records()

    @property
    def counts(self) -> Counts:
        return self.state.counts
