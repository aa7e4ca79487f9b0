"""`KeyedLock`: one `anyio.Lock` per key, made when first needed and dropped when free.

The Host holds one keyed by Session id, so that going live, going cold and
writing a cold Session's stored log never overlap for one Session (this
process stays the one writer of each log) while different Sessions never
wait for each other. A key's lock exists only while someone holds it or
waits for it, so a Host that has seen a million Sessions keeps none.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

__all__ = ["KeyedLock"]


@dataclass(slots=True)
class _Entry:
    # fast_acquire: taking a free lock does not yield to the event loop, so an
    # uncontended caller runs on exactly as it would without the lock.
    lock: anyio.Lock = field(default_factory=lambda: anyio.Lock(fast_acquire=True))
    users: int = 0  # holding or waiting


class KeyedLock:
    """A lock per key (see the module docstring). Not reentrant, like `anyio.Lock`."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, _Entry] = {}

    def locked(self, key: Hashable) -> bool:
        """True while someone holds `key`'s lock."""
        entry = self._entries.get(key)
        return entry is not None and entry.lock.locked()

    def waiting(self, key: Hashable) -> int:
        """How many wait for `key`'s lock now (not counting its holder)."""
        entry = self._entries.get(key)
        return 0 if entry is None else entry.lock.statistics().tasks_waiting

    async def acquire(self, key: Hashable) -> None:
        """Wait until `key`'s lock is free and take it (first come, first served)."""
        entry = self._entries.setdefault(key, _Entry())
        entry.users += 1
        try:
            await entry.lock.acquire()
        except BaseException:
            self._leave(key, entry)
            raise

    def acquire_nowait(self, key: Hashable) -> bool:
        """Take `key`'s lock if it is free, without waiting; whether it was taken."""
        if self.locked(key):
            return False
        entry = self._entries.setdefault(key, _Entry())
        entry.lock.acquire_nowait()
        entry.users += 1
        return True

    def release(self, key: Hashable) -> None:
        """Give `key`'s lock back (the holder only)."""
        entry = self._entries[key]
        entry.lock.release()
        self._leave(key, entry)

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        """`key`'s lock for the body of an `async with`."""
        await self.acquire(key)
        try:
            yield
        finally:
            self.release(key)

    def __len__(self) -> int:
        """How many keys have a lock now (held or waited for)."""
        return len(self._entries)

    def _leave(self, key: Hashable, entry: _Entry) -> None:
        entry.users -= 1
        if entry.users == 0:
            del self._entries[key]
