"""Which wake store goes with which Session store (`--store`, DESIGN §4).

The wake index is kept beside the logs it indexes: for `jsonl:DIR` the file
`DIR/wake-index.jsonl` (`JsonlWakeStore`), for `memory:` memory. A store
kind without a wake store of its own (PostgreSQL, until it brings its
table) cannot wake cold Sessions: asking for it is a clear error rather
than an index kept somewhere its other hosts cannot see.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..persistence.stores import StoreChoice
from .jsonl import JsonlWakeStore
from .store import MemoryWakeStore, WakeStore

__all__ = ["WakeUnavailable", "wake_store_for", "wake_stores"]


class WakeUnavailable(ValueError):
    """The chosen Session store has no wake index (the message says which)."""


def wake_stores() -> dict[str, Callable[[Any], WakeStore]]:
    """The wake store of each Session store kind, by kind name (built per call)."""
    return {
        "jsonl": lambda settings: JsonlWakeStore(settings.directory),
        "memory": lambda settings: MemoryWakeStore(),
    }


def wake_store_for(choice: StoreChoice) -> WakeStore:
    """A new wake store beside `choice`'s logs; raises `WakeUnavailable`."""
    make = wake_stores().get(choice.kind.name)
    if make is None:
        raise WakeUnavailable(
            f"[host] wake_cold_sessions is not available with the {choice.kind.name} store "
            "in this version of dsh; use jsonl:DIR or turn it off"
        )
    return make(choice.settings)
