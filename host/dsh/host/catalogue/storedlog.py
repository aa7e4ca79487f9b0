"""`StoredLog`: a cold Session's stored log as a `dsh.SessionLog`, read on demand.

Plugins read a log through `event(seq)` and `scan(...)`, which are plain
synchronous calls (hooks are called by pluggy, synchronously). For a live
Session the log is in memory. For a cold one it is in storage, and a read
must never block the event loop, so:

**A stored log is read from a worker thread.** The host calls cold hooks
(`dsh_event_view` for a history page, `dsh_session_state`, …) inside
`anyio.to_thread.run_sync`; there each read of the log blocks that thread
while the backend's ordinary coroutine — `Backend.read(id, start, stop,
types=…)` — runs on the event loop through `anyio.from_thread.run`. This
works for every backend as it is: the JSONL backend does its file work in
its own reader threads, and a future PostgreSQL backend would run its
queries with an async driver on the loop, unchanged. (The alternative, an
async prefetch of "everything a plugin might read", would have to decode
every event of the plugin's types for each page: about 20,000 for a
100,000-event log with reminders.) Calling a stored log on the event loop
thread itself raises `RuntimeError`: it would block the loop, or deadlock.

**Reads are ranged, type-filtered and remembered.** A `scan` fetches the
range it walks in growing spans (256 seqs first, then 4× more each time, so
a walk that stops early reads little and a whole fold needs few round
trips), with the scan's type filter; `event(seq)` fetches a small window
around the seq. Everything fetched stays for the log's life (one page, one
hook call) with the ranges it covers, so overlapping scans — every receipt
on a page walking back to its create — read storage once.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, insort
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING

import anyio.from_thread

from ...session.event import SessionEvent
from ...session.header import SessionHeader

if TYPE_CHECKING:
    from ...persistence.backend import Backend

__all__ = ["StoredLog"]

_FIRST_SPAN = 256
_GROWTH = 4
_MAX_SPAN = 65_536
_AROUND = 32

Filter = frozenset[str] | None


class StoredLog:
    """The stored log of one cold Session, `length` events long (see the module docstring).

    `header`, `id`, `fold_start` and `len()` are known up front; `event()`
    and `scan()` read storage and must be called from a worker thread.
    """

    def __init__(self, backend: Backend, header: SessionHeader, length: int) -> None:
        self._backend = backend
        self._header = header
        self._length = length
        self._loop_thread = threading.get_ident()
        self._events: dict[int, SessionEvent] = {}
        self._seqs: list[int] = []  # the keys of `_events`, sorted
        self._covered: dict[Filter, list[tuple[int, int]]] = {}
        self.reads = 0  # how many times storage was read (for tests and benchmarks)

    # -- SessionLog -------------------------------------------------------

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def id(self) -> str:
        return self._header.id

    @property
    def fold_start(self) -> int:
        return self._header.seed_length or 0

    def __len__(self) -> int:
        return self._length

    def event(self, seq: int) -> SessionEvent:
        """The event at `seq`; raises `IndexError` outside `[0, len(self))`."""
        if not 0 <= seq < self._length:
            raise IndexError(f"session {self.id} has no event {seq}")
        event = self._events.get(seq)
        if event is None:
            start, stop = max(0, seq - _AROUND), min(self._length, seq + _AROUND)
            self._fetch(*self._uncovered(None, start, stop, seq), None)
            event = self._events[seq]
        return event

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]:
        """The events with `start <= seq < stop`, optionally of `types` only (`SessionLog`)."""
        wanted: Filter = None if types is None else frozenset(types)
        first = max(start, 0)
        end = self._length if stop is None else min(stop, self._length)
        if wanted is not None and not wanted:
            return
        if reverse:
            yield from self._backward(first, end, wanted)
        else:
            yield from self._forward(first, end, wanted)

    # -- what the host already read ----------------------------------------

    def prime(self, events: Sequence[SessionEvent], start: int, stop: int) -> None:
        """Take in `events`, every stored event with `start <= seq < stop` (a page the
        host read itself), so plugins reading them do not read storage again."""
        self._store(events, start, stop, None)

    # -- walking ----------------------------------------------------------

    def _forward(self, start: int, end: int, wanted: Filter) -> Iterator[SessionEvent]:
        position, span = start, _FIRST_SPAN
        while position < end:
            covered = self._cover_end(wanted, position)
            if covered is None:
                upper = min(end, position + span, self._next_cover(wanted, position, end))
                self._fetch(position, upper, wanted)
                span = min(span * _GROWTH, _MAX_SPAN)
                continue
            upper = min(covered, end)
            yield from self._cached(position, upper, wanted, reverse=False)
            position = upper

    def _backward(self, start: int, end: int, wanted: Filter) -> Iterator[SessionEvent]:
        position, span = end, _FIRST_SPAN
        while position > start:
            covered = self._cover_start(wanted, position)
            if covered is None:
                lower = max(start, position - span, self._previous_cover(wanted, start, position))
                self._fetch(lower, position, wanted)
                span = min(span * _GROWTH, _MAX_SPAN)
                continue
            lower = max(covered, start)
            yield from self._cached(lower, position, wanted, reverse=True)
            position = lower

    def _cached(
        self, start: int, stop: int, wanted: Filter, *, reverse: bool
    ) -> Iterator[SessionEvent]:
        seqs = self._seqs[bisect_left(self._seqs, start) : bisect_left(self._seqs, stop)]
        for seq in reversed(seqs) if reverse else seqs:
            event = self._events[seq]
            if wanted is None or event.type in wanted:
                yield event

    # -- what is covered ----------------------------------------------------

    def _ranges(self, wanted: Filter) -> list[tuple[int, int]]:
        """The ranges whose every event of `wanted` is cached (unfiltered ones count)."""
        ranges = list(self._covered.get(None, ()))
        if wanted is not None:
            for key, spans in self._covered.items():
                if key is not None and wanted <= key:
                    ranges.extend(spans)
        return ranges

    def _cover_end(self, wanted: Filter, position: int) -> int | None:
        """How far from `position` on everything of `wanted` is cached, or None."""
        ends = [stop for start, stop in self._ranges(wanted) if start <= position < stop]
        return max(ends) if ends else None

    def _cover_start(self, wanted: Filter, position: int) -> int | None:
        """From where up to `position` everything of `wanted` is cached, or None."""
        starts = [start for start, stop in self._ranges(wanted) if start < position <= stop]
        return min(starts) if starts else None

    def _next_cover(self, wanted: Filter, position: int, end: int) -> int:
        starts = [start for start, _ in self._ranges(wanted) if position < start < end]
        return min(starts, default=end)

    def _previous_cover(self, wanted: Filter, start: int, position: int) -> int:
        stops = [stop for _, stop in self._ranges(wanted) if start < stop < position]
        return max(stops, default=start)

    def _uncovered(self, wanted: Filter, start: int, stop: int, seq: int) -> tuple[int, int]:
        """The part of `[start, stop)` around `seq` that is not cached yet."""
        return max(start, self._previous_cover(wanted, start, seq + 1)), min(
            stop, self._next_cover(wanted, seq, stop)
        )

    # -- reading storage -----------------------------------------------------

    def _fetch(self, start: int, stop: int, wanted: Filter) -> None:
        if threading.get_ident() == self._loop_thread:
            raise RuntimeError(
                f"the stored log of session {self.id} reads storage: call it from a worker "
                "thread (Catalogue.with_stored_log), never on the event loop"
            )
        types = None if wanted is None else sorted(wanted)
        events = anyio.from_thread.run(self._read, start, stop, types)
        self.reads += 1
        self._store(events, start, stop, wanted)

    async def _read(self, start: int, stop: int, types: list[str] | None) -> list[SessionEvent]:
        return await self._backend.read(self.id, start, stop, types=types)

    def _store(self, events: Sequence[SessionEvent], start: int, stop: int, wanted: Filter) -> None:
        for event in events:
            if event.seq not in self._events:
                self._events[event.seq] = event
                insort(self._seqs, event.seq)
        spans = self._covered.setdefault(wanted, [])
        spans.append((start, stop))
        spans.sort()
        merged: list[tuple[int, int]] = []
        for low, high in spans:
            if merged and low <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], high))
            else:
                merged.append((low, high))
        self._covered[wanted] = merged
