"""Which wake store goes with which Session store (`--store`, DESIGN §4).

The wake index is kept beside the logs it indexes: for `jsonl:DIR` the file
`DIR/wake-index.jsonl` (`JsonlWakeStore`), for `memory:` memory, for
`postgresql://…` the `wake` table every host on the database shares
(`PostgresWakeStore`, on the connections of the Host's backend). A store
kind without a wake store of its own cannot wake cold Sessions: asking for
it is a clear error rather than an index kept somewhere its other hosts
cannot see.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..persistence.backend import Backend
from ..persistence.backends import StoreChoice
from .backend import MemoryWakeStore, WakeStore
from .jsonl import JsonlWakeStore

__all__ = ["WakeUnavailable", "wake_store_for", "wake_stores"]


class WakeUnavailable(ValueError):
    """The chosen Session store has no wake index (the message says which)."""


def wake_stores() -> dict[str, Callable[[Any, Backend | None], WakeStore]]:
    """The wake store of each Session store kind, by kind name (built per call): each
    takes the kind's settings and the Host's backend (None: before there is one)."""
    return {
        "jsonl": lambda settings, backend: JsonlWakeStore(settings.directory),
        "memory": lambda settings, backend: MemoryWakeStore(),
        "postgresql": _postgres,
        "postgres": _postgres,
    }


def _postgres(settings: Any, backend: Backend | None) -> WakeStore:
    from ..persistence.postgres import PostgresBackend
    from ..persistence.postgres.wake import PostgresWakeStore

    if isinstance(backend, PostgresBackend):
        return PostgresWakeStore(backend)
    # Before a Host's backend (checked, or `dsh index rebuild`): its own, opened on use.
    return PostgresWakeStore(PostgresBackend(settings), owns_backend=True)


def wake_store_for(choice: StoreChoice, backend: Backend | None = None) -> WakeStore:
    """A new wake store beside `choice`'s logs, on `backend`'s connections where it
    needs any (the Host's own backend); raises `WakeUnavailable`."""
    make = wake_stores().get(choice.kind.name)
    if make is None:
        raise WakeUnavailable(
            f"[host] wake_cold_sessions is not available with the {choice.kind.name} store "
            "in this version of dsh; use jsonl:DIR or turn it off"
        )
    return make(choice.settings, backend)
