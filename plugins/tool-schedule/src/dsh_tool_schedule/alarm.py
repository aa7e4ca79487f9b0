"""The alarm: one wait on a clock for every owner that has nothing to do until a time.

An owner whose reminders are all in the future sets the alarm to its earliest
wall-clock target and ends its task, so an armed Session idles as one heap
entry here rather than as a sleeping task (a task, its cancel scope and the
clock's timer: ≈ 10 KB each). The plugin keeps one `Alarm` per clock
(`Alarms`), started lazily and stopped when its heap empties.

The wait keeps the owner's rules: it sleeps toward the earliest target on the
clock in segments of at most `max_segment_seconds`, ending the last long one
`early_wake_seconds` before the target and sleeping the short rest, and it
re-reads `clock.wall_ms()` at every wake, so a wall-clock rollback never wakes
anyone early and a forward jump makes a target overdue at the next wake.

Contract:

- `set(key, target_ms, wake)` calls `wake()` once, in the alarm's task, at the
  first wake at which the wall clock reads at least `target_ms`; it replaces
  `key`'s earlier target, if any. Due targets are woken earliest first (the
  earlier `set` breaks a tie); a `wake` that raises is logged and the others
  still run.
- `clear(key)` forgets `key`'s target (a no-op without one).
- `aclose()` (at the plugin scope's end) stops the wait and forgets every
  target; `set` is then a no-op: the installations it served are closing too.
- A cleared or replaced target keeps no reference to its key or `wake`.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

import anyio

from dsh import TaskSet

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from dsh import Clock

    from .config import ScheduleConfig

__all__ = ["Alarm", "Alarms"]

log = logging.getLogger(__name__)


class Alarm:
    """Wakes keys at wall-clock targets through one sleep on `clock` (see the module docstring)."""

    def __init__(self, clock: Clock, config: ScheduleConfig, tasks: TaskSet) -> None:
        self._clock = clock
        self._config = config
        self._tasks = tasks
        # The heap holds only (target, order); what to wake is in `_entries` under
        # the order, and `_current` maps a key to its order. A replaced or cleared
        # target leaves a bare (target, order) behind, dropped when it reaches the
        # top or when the heap is compacted, and refers to no owner meanwhile.
        self._heap: list[tuple[int, int]] = []
        self._entries: dict[int, tuple[Hashable, Callable[[], None]]] = {}
        self._current: dict[Hashable, int] = {}
        self._order = itertools.count()
        self._running = False
        self._sleep: anyio.CancelScope | None = None

    def __len__(self) -> int:
        """How many keys have a target."""
        return len(self._entries)

    def set(self, key: Hashable, target_ms: int, wake: Callable[[], None]) -> None:
        """Call `wake()` once the wall clock reads `target_ms` (replaces `key`'s target)."""
        if self._tasks.closed:
            return
        self._forget(key)
        order = next(self._order)
        self._current[key] = order
        self._entries[order] = (key, wake)
        heapq.heappush(self._heap, (target_ms, order))
        if self._heap[0][1] == order:
            self._look_again()
        else:
            self._compact_if_sparse()

    def clear(self, key: Hashable) -> None:
        """Forget `key`'s target, if it has one."""
        order = self._forget(key)
        if order is None:
            return
        if self._heap[0][1] == order:
            self._look_again()
        else:
            self._compact_if_sparse()

    async def aclose(self) -> None:
        """Stop the wait and forget every target."""
        self._heap.clear()
        self._entries.clear()
        self._current.clear()
        await self._tasks.aclose()

    def _forget(self, key: Hashable) -> int | None:
        order = self._current.pop(key, None)
        if order is not None:
            del self._entries[order]
        return order

    def _look_again(self) -> None:
        # The earliest target changed: end the sleep toward the old one, or
        # start the wait if none runs.
        if self._sleep is not None:
            self._sleep.cancel()
        elif not self._running and not self._tasks.closed:
            self._running = True
            self._tasks.start_soon(self._run, name="schedule alarm")

    def _compact_if_sparse(self) -> None:
        if len(self._heap) > 2 * len(self._entries) + 64:
            self._heap = [entry for entry in self._heap if entry[1] in self._entries]
            heapq.heapify(self._heap)

    async def _run(self) -> None:
        try:
            while (remaining_ms := self._wake_due()) is not None:
                with anyio.CancelScope() as scope:
                    self._sleep = scope
                    try:
                        await self._clock.sleep(self._segment(remaining_ms))
                    finally:
                        self._sleep = None
        finally:
            self._running = False

    def _wake_due(self) -> int | None:
        """Wake every due key; return how far off the earliest other target is, or None."""
        now = self._clock.wall_ms()
        heap = self._heap
        while heap:
            target, order = heap[0]
            entry = self._entries.get(order)
            if entry is None:
                heapq.heappop(heap)
                continue
            if target > now:
                return target - now
            heapq.heappop(heap)
            key, wake = entry
            self._forget(key)
            try:
                wake()
            except Exception:
                log.exception("schedule alarm: waking %r failed", key)
        return None

    def _segment(self, remaining_ms: int) -> float:
        # Wake `early` before the target, then sleep the short rest: a long
        # sleep lands late by about 0.1% (timer slack), a short one barely.
        remaining = remaining_ms / 1000
        early = self._config.early_wake_seconds
        wanted = remaining - early if remaining > early else remaining
        return min(self._config.max_segment_seconds, wanted)


class Alarms:
    """One `Alarm` per clock, each waiting in its own task of `group`."""

    def __init__(self, group: TaskGroup, config: ScheduleConfig) -> None:
        self._group = group
        self._config = config
        self._alarms: dict[Clock, Alarm] = {}

    def for_clock(self, clock: Clock) -> Alarm:
        """The alarm that waits on `clock` (created on first use)."""
        alarm = self._alarms.get(clock)
        if alarm is None:
            tasks = TaskSet(self._group, name="schedule alarm")
            alarm = self._alarms[clock] = Alarm(clock, self._config, tasks)
        return alarm

    async def aclose(self) -> None:
        """Stop every alarm's wait and wait for it to end."""
        for alarm in list(self._alarms.values()):
            await alarm.aclose()
