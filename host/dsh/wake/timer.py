"""`WakeTimer`: one timer for every armed Session, on the host's clock.

DESIGN §13: a sleeping task costs ≈ 4.9 KB and arming 100k of them blocks
the loop for seconds, while one heap entry costs a few dozen bytes. So the
whole index has one task that sleeps toward the earliest armed time; arming
or disarming a Session is a dict and heap operation, and an earlier time
interrupts the current sleep.

Targets are wall-clock epoch ms; the clock's sleep is monotonic. The task
sleeps in segments of at most `MAX_SEGMENT_SECONDS` and re-reads the wall
clock at every wake, so a clock stepped back never wakes a Session early by
more than one segment and a clock stepped forward makes targets due at the
next wake. A long sleep lands about 0.1% late (kernel timer slack), so a
segment longer than a second ends `EARLY_WAKE_SECONDS` before its target and
the short remainder is slept again (under 1 ms late).

Due Sessions are handed to `on_due(ids)` (synchronously, earliest first) and
disarmed; the caller re-arms what it wants to see again.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

import anyio

from ..base.clock import Clock

__all__ = ["EARLY_WAKE_SECONDS", "MAX_SEGMENT_SECONDS", "WakeTimer"]

MAX_SEGMENT_SECONDS = 60.0
EARLY_WAKE_SECONDS = 0.1


class WakeTimer:
    """Arms Sessions at wall-clock times and reports them when due (module docstring)."""

    def __init__(self, clock: Clock, on_due: Callable[[list[str]], None]) -> None:
        self._clock = clock
        self._on_due = on_due
        self._at: dict[str, int] = {}
        self._heap: list[tuple[int, int, str]] = []
        self._order = itertools.count()
        self._changed = anyio.Event()
        self._sleeping: anyio.CancelScope | None = None
        self._target: int | None = None

    def __len__(self) -> int:
        return len(self._at)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._at

    def at(self, session_id: str) -> int | None:
        """When `session_id` is armed for, or None."""
        return self._at.get(session_id)

    def arm(self, session_id: str, at_ms: int) -> None:
        """Report `session_id` at `at_ms` (replacing an earlier arming)."""
        if self._at.get(session_id) == at_ms:
            return
        self._at[session_id] = at_ms
        heapq.heappush(self._heap, (at_ms, next(self._order), session_id))
        if len(self._heap) > 2 * len(self._at) + 64:
            # Disarmed and re-armed items pile up below the top: keep the heap small.
            self._heap = [(t, next(self._order), sid) for sid, t in self._at.items()]
            heapq.heapify(self._heap)
        if self._target is None:
            self._changed.set()
        elif at_ms < self._target and self._sleeping is not None:
            self._sleeping.cancel()

    def disarm(self, session_id: str) -> None:
        """Forget `session_id` (its heap item is dropped when it comes up)."""
        self._at.pop(session_id, None)

    async def run(self) -> None:
        """Sleep toward the earliest target and report due Sessions, until cancelled."""
        while True:
            self._drop_stale()
            if not self._heap:
                self._target = None
                await self._wait_for_change()
                continue
            target = self._heap[0][0]
            now = self._clock.wall_ms()
            if target <= now:
                self._fire(now)
                continue
            self._target = target
            delay = (target - now) / 1000
            if delay > 1.0:
                delay = min(MAX_SEGMENT_SECONDS, delay - EARLY_WAKE_SECONDS)
            with anyio.CancelScope() as self._sleeping:
                await self._clock.sleep(delay)
            self._sleeping = None

    def _drop_stale(self) -> None:
        while self._heap:
            at_ms, _, session_id = self._heap[0]
            if self._at.get(session_id) == at_ms:
                return
            heapq.heappop(self._heap)

    def _fire(self, now: int) -> None:
        due: list[str] = []
        while self._heap and self._heap[0][0] <= now:
            at_ms, _, session_id = heapq.heappop(self._heap)
            if self._at.get(session_id) == at_ms:
                del self._at[session_id]
                due.append(session_id)
        if due:
            self._on_due(due)

    async def _wait_for_change(self) -> None:
        await self._changed.wait()
        self._changed = anyio.Event()
