"""`MemoryOutbox` keeps the outbox contract (it is the state alone)."""

from __future__ import annotations

import pytest
from dsh_notify.outbox import MemoryOutbox, OutboxBackend

from .outbox_contract import OutboxContract

pytestmark = pytest.mark.anyio


class TestMemoryOutbox(OutboxContract):
    async def make(self, keep: int = 1000) -> OutboxBackend:
        outbox = MemoryOutbox(keep=keep)
        await outbox.open()
        return outbox

    async def reopen(self, outbox: OutboxBackend) -> OutboxBackend:
        assert isinstance(outbox, MemoryOutbox)
        outbox.state.claimed.clear()  # what a restart of a process keeping it would do
        return outbox
