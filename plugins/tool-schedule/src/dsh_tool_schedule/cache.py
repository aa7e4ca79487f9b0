"""`FoldCache`: the fold of each recently read log, kept and extended, not redone.

Every read-side hook needs the fold of a Session's log: the receipts of a
history page, `dsh_session_state` (each state frame, each hello),
`dsh_session_wake_at` (each hibernation, each index rebuild). For a cold
Session the host hands each request a new `StoredLog`, so folding from
`fold_start` each time costs the whole log's `schedule/change` events
(20,000 in a 100,000-event log) per request. The cache keeps, per Session id,
the furthest fold it computed, and answers a later log of that Session by
extending a copy of it with the events appended since.

A held fold is reused only for the same log: the same header (a Session
deleted and made again, or a fork, has another) and the same last event read
(`event(position - 1)`, byte for byte: a log replaced, truncated or restored
from elsewhere shows there), and only when the log is at least as long. A log
shorter than the held fold (a live Session's durable prefix that is behind a
cold read) gets a fold of its own, not kept. Only durable logs are kept: the
plugin passes a live `Session` (which may hold events not yet confirmed) only
up to an event the host says is durable.

Bounded: the `size` most recently used logs (default 256), and at most
`max_ids` reminder ids seen across the held folds (default 1,000,000; a fold
remembers every id its log created, about 100 bytes each), the least
recently used dropped first (the most recent is always kept); `clear()`
drops them all (the plugin's scope does, when it closes). Thread-safe: hooks on
cold logs run in worker threads, and the lock is held only to look up and
store, never while a log is read (a read from a worker waits for the event
loop, which may itself be asking the cache). A fold handed out is never
advanced again (readers may share it); extending always works on a copy.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .fold import ScheduleFold

if TYPE_CHECKING:
    from dsh import SessionHeader, SessionLog

__all__ = ["DEFAULT_MAX_IDS", "DEFAULT_SIZE", "FoldCache"]

DEFAULT_SIZE: Final = 256
DEFAULT_MAX_IDS: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class _Held:
    header: SessionHeader
    fold: ScheduleFold
    witness: bytes | None
    """`event(fold.position - 1)` as stored bytes (None: the fold read no event)."""


class FoldCache:
    """Folds of logs by Session id, most recently used last (see the module docstring)."""

    def __init__(self, size: int = DEFAULT_SIZE, max_ids: int = DEFAULT_MAX_IDS) -> None:
        if size < 1:
            raise ValueError(f"a fold cache holds at least one log, not {size}")
        self.size = size
        self.max_ids = max_ids
        self._ids = 0
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        """How many folds were answered from a held one (for tests and benchmarks)."""

    def __len__(self) -> int:
        return len(self._held)

    def clear(self) -> None:
        """Drop every held fold."""
        with self._lock:
            self._held.clear()
            self._ids = 0

    def fold(self, log: SessionLog, stop: int | None = None) -> ScheduleFold:
        """The fold of `log`'s `[fold_start, stop or len(log))`; do not advance it."""
        end = len(log) if stop is None else max(log.fold_start, min(stop, len(log)))
        held = self._usable(log)
        if held is not None and held.fold.position == end:
            return held.fold
        if held is not None and held.fold.position < end:
            fold = held.fold.copy().advance(log, end)
        else:  # nothing held, or a fold past `end` (kept: it serves the longer log)
            fold = ScheduleFold.of(log, end)
        self._keep(log, fold)
        return fold

    def past(self, log: SessionLog, seq: int, stop: int | None = None) -> ScheduleFold:
        """A fold of `log` that has read past `seq` (a receipt's question); do not advance it.

        The held fold when it has, else `fold(log, stop)`.
        """
        held = self._usable(log)
        if held is not None and held.fold.position > seq:
            return held.fold
        return self.fold(log, stop)

    def seed(self, log: SessionLog) -> ScheduleFold | None:
        """A copy of the held fold of `log` that the caller may advance, or None."""
        held = self._usable(log)
        return None if held is None else held.fold.copy()

    # -- internals -----------------------------------------------------------

    def _usable(self, log: SessionLog) -> _Held | None:
        """The held fold of `log`'s Session if it is a fold of this very log."""
        with self._lock:
            held = self._held.get(log.id)
            if held is not None:
                self._held.move_to_end(log.id)
        if held is None or held.header != log.header or held.fold.position > len(log):
            return None
        if held.witness is not None and _witness(log, held.fold.position) != held.witness:
            return None
        self.hits += 1
        return held

    def _keep(self, log: SessionLog, fold: ScheduleFold) -> None:
        position = fold.position
        witness = _witness(log, position) if position > 0 else None
        with self._lock:
            current = self._held.get(log.id)
            if (
                current is not None
                and current.header == log.header
                and current.fold.position > position
            ):
                return
            if current is not None:
                self._ids -= current.fold.created
            self._held[log.id] = _Held(log.header, fold, witness)
            self._held.move_to_end(log.id)
            self._ids += fold.created
            while len(self._held) > self.size or (self._ids > self.max_ids and len(self._held) > 1):
                _, dropped = self._held.popitem(last=False)
                self._ids -= dropped.fold.created


def _witness(log: SessionLog, position: int) -> bytes:
    return log.event(position - 1).to_bytes()
