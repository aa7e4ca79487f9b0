"""Which wake store goes with which Session store (`--store`, DESIGN §4).

The wake index is kept beside the logs it indexes: for `jsonl:DIR` the file
`DIR/wake-index.jsonl` (`JsonlWakeBackend`), for `memory:` memory, for
`postgresql://…` the `wake` table every host on the database shares
(`PostgresWakeBackend`, on the connections of the Host's backend). A store
kind without a wake store of its own cannot wake cold Sessions: asking for
it is a clear error rather than an index kept somewhere its other hosts
cannot see.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..persistence.backend import Backend
from ..persistence.backends import BackendChoice
from .backend import MemoryWakeBackend, WakeBackend
from .errors import WakeUnavailable
from .jsonl import JsonlWakeBackend

__all__ = ["WakeUnavailable", "wake_backend_for", "wake_backends"]


def wake_backends() -> dict[str, Callable[[Any, Backend | None], WakeBackend]]:
    """The wake store of each Session store kind, by kind name (built per call): each
    takes the kind's settings and the Host's backend (None: before there is one)."""
    return {
        "jsonl": lambda settings, backend: JsonlWakeBackend(settings.directory),
        "memory": lambda settings, backend: MemoryWakeBackend(),
        "postgresql": _postgres,
        "postgres": _postgres,
    }


def _postgres(settings: Any, backend: Backend | None) -> WakeBackend:
    from ..persistence.postgres import PostgresBackend
    from .postgres import PostgresWakeBackend

    if isinstance(backend, PostgresBackend):
        return PostgresWakeBackend(backend)
    # Before a Host's backend (checked, or `dsh index rebuild`): its own, opened on use.
    return PostgresWakeBackend(PostgresBackend(settings), owns_backend=True)


def wake_backend_for(choice: BackendChoice, backend: Backend | None = None) -> WakeBackend:
    """A new wake store beside `choice`'s logs, on `backend`'s connections where it
    needs any (the Host's own backend); raises `WakeUnavailable`."""
    make = wake_backends().get(choice.kind.name)
    if make is None:
        raise WakeUnavailable(
            f"[host] wake_cold_sessions is not available with the {choice.kind.name} store "
            "in this version of dsh; use jsonl:DIR or turn it off"
        )
    return make(choice.settings, backend)
