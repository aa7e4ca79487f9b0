"""`MemoryOutbox`: an outbox that lives as long as the process (the `memory:` store, tests)."""

from __future__ import annotations

from collections.abc import Sequence

from .backend import KEEP_FINISHED
from .delivery import Delivery
from .state import OutboxState, StateOutbox

__all__ = ["MemoryOutbox"]


class MemoryOutbox(StateOutbox):
    """Deliveries in memory only: nothing outlives the process, as with the Sessions."""

    description = "the notify outbox in memory"

    def __init__(self, *, keep: int = KEEP_FINISHED) -> None:
        self.state = OutboxState(keep)

    async def add(self, deliveries: Sequence[Delivery]) -> int:
        fresh = self.state.new(deliveries)
        for delivery in fresh:
            self.state.put(delivery)
        return len(fresh)

    async def settle(self, delivery: Delivery) -> bool:
        if not self.state.settles(delivery):
            return False
        self.state.settle(delivery)
        self.state.prune()
        return True
