"""`Listeners`: a registry of callbacks (or listener objects) whose `add` returns a disposer.

Everything in dsh that lets others listen — the live Sessions' observers and
per-Session listeners, an agent's streamed-text listeners, a plugin's own
watchers — keeps them in a `Listeners`, so that every registration can be
undone by the disposer it returned (which goes into a `Scope`):

    listeners: Listeners[Callable[[str], None]] = Listeners()
    dispose = listeners.add(print)
    for listener in listeners:      # a snapshot: listeners may add or remove others
        listener("hello")
    dispose()                        # removes exactly that registration; idempotent

Adding the same callback twice makes two registrations; each disposer removes
its own. Calling listeners (and containing their failures) stays with the
owner, which knows what a failure means.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from .scope import Disposer

__all__ = ["Listeners"]

T = TypeVar("T")


class Listeners(Generic[T]):
    """Registered listeners in registration order."""

    __slots__ = ("_entries", "_next", "_snapshot")

    def __init__(self) -> None:
        self._entries: dict[int, T] = {}
        self._next = 0  # an int, not an itertools.count: every live Session keeps a few
        # What iterating gives until the next change: an append iterates a Session's
        # listeners and every observer, and registrations change rarely.
        self._snapshot: tuple[T, ...] | None = None

    def add(self, listener: T) -> Disposer:
        """Register `listener`; returns the disposer that removes this registration."""
        key = self._next
        self._next = key + 1
        self._entries[key] = listener
        self._snapshot = None
        return _Removal(self, key)

    def clear(self) -> None:
        """Forget every listener (their disposers become no-ops)."""
        self._entries.clear()
        self._snapshot = None

    def _remove(self, key: int) -> None:
        if key in self._entries:
            del self._entries[key]
            self._snapshot = None

    def __iter__(self) -> Iterator[T]:
        snapshot = self._snapshot
        if snapshot is None:
            snapshot = self._snapshot = tuple(self._entries.values())
        return iter(snapshot)

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)


class _Removal:
    """The disposer of one registration (a callable: `Scope`s take it as is)."""

    __slots__ = ("_key", "_listeners")

    def __init__(self, listeners: Listeners[Any], key: int) -> None:
        self._listeners = listeners
        self._key = key

    def __call__(self) -> None:
        self._listeners._remove(self._key)

    def __repr__(self) -> str:
        return f"<remove listener {self._key}>"
