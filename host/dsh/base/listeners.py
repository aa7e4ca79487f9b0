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
owner, which knows what a failure means. A hot path reads the tuple
`snapshot` (or, when it is None, `current()`) without the call that
iterating costs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from .scope import Disposer

__all__ = ["Listeners"]

T = TypeVar("T")


class Listeners(Generic[T]):
    """Registered listeners in registration order.

    `snapshot` is a tuple of them, or None after a change until `current()`
    builds the next one (lazily: a registry nobody iterates holds no copy,
    and every live Session keeps a few). A tuple handed out never changes,
    so iterating it is safe while listeners add or remove others. Read it;
    never assign it.
    """

    __slots__ = ("_entries", "_next", "snapshot")

    def __init__(self) -> None:
        self._entries: dict[int, T] = {}
        self._next = 0  # an int, not an itertools.count: every live Session keeps a few
        self.snapshot: tuple[T, ...] | None = ()

    def add(self, listener: T) -> Disposer:
        """Register `listener`; returns the disposer that removes this registration."""
        key = self._next
        self._next = key + 1
        self._entries[key] = listener
        self.snapshot = None
        return _Removal(self, key)

    def clear(self) -> None:
        """Forget every listener (their disposers become no-ops)."""
        self._entries.clear()
        self.snapshot = ()

    def _remove(self, key: int) -> None:
        if key in self._entries:
            del self._entries[key]
            self.snapshot = None

    def current(self) -> tuple[T, ...]:
        """The listeners as they are now (`snapshot`, built if a change made it None)."""
        snapshot = self.snapshot
        if snapshot is None:
            snapshot = self.snapshot = tuple(self._entries.values())
        return snapshot

    def __iter__(self) -> Iterator[T]:
        return iter(self.current())

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
