"""`outbox_for(storage)`: the outbox kept where the Host keeps its Sessions.

- `jsonl`: `JsonlOutbox`, `<data-dir>/notify-outbox.jsonl` beside the wake index;
- `postgresql`: `PostgresOutbox`, tables `notify_*` in the store's schema,
  shared by every host of the database;
- `memory`: `MemoryOutbox`: nothing outlives the process, like the Sessions.
"""

from __future__ import annotations

from dsh import StorageLocation

from .backend import KEEP_FINISHED, OutboxBackend
from .jsonl import JsonlOutbox
from .memory import MemoryOutbox

__all__ = ["outbox_for"]


def outbox_for(storage: StorageLocation, *, keep: int = KEEP_FINISHED) -> OutboxBackend:
    """The outbox for the Host's `storage` (see the module docstring)."""
    if storage.kind == "jsonl" and storage.data_dir is not None:
        return JsonlOutbox(storage.data_dir, keep=keep)
    if storage.kind == "postgresql" and storage.url is not None:
        # psycopg is there: the Host connected to this store with it.
        from .postgres import PostgresOutbox

        where = storage.redacted_url or "?"
        return PostgresOutbox(storage.url, storage.schema or "dsh", where=where, keep=keep)
    return MemoryOutbox(keep=keep)
