"""The durable outbox: deliveries recorded before they are sent, marked after.

- `delivery`: `Delivery`, one alert to one target, and its states;
- `backend`: `OutboxBackend`, the contract every backend keeps;
- `state`: `OutboxState`, a host's deliveries and claims in memory;
- `memory`, `jsonl`, `postgres`: the three backends; `backends.outbox_for`
  picks the one beside the Host's Sessions.
"""

from .backend import CLAIM_LEASE_MS, KEEP_FINISHED, Counts, OutboxBackend
from .backends import outbox_for
from .delivery import Delivery
from .jsonl import JsonlOutbox
from .memory import MemoryOutbox

__all__ = [
    "CLAIM_LEASE_MS",
    "KEEP_FINISHED",
    "Counts",
    "Delivery",
    "JsonlOutbox",
    "MemoryOutbox",
    "OutboxBackend",
    "outbox_for",
]
