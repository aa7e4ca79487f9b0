"""A `FakeClock` that tests drive: wall time and elapsed time move only when told.

`advance(seconds)` moves both wall and elapsed time and wakes every sleeper
whose deadline passed. `jump_wall(seconds)` moves only the wall clock (forward
or backward), as an NTP step or a user changing the time would; sleepers are
not woken by it, exactly as with a real monotonic timer.
"""

from __future__ import annotations

import heapq
import itertools

import anyio

__all__ = ["FakeClock"]


class FakeClock:
    """A `Clock` whose time moves only through `advance()` and `jump_wall()`.

    `sleeps` records every requested sleep, in order, for assertions.
    """

    def __init__(self, wall_ms: int = 1_767_225_600_000) -> None:
        self._wall_ms = wall_ms
        self._elapsed = 0.0
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
        self._order = itertools.count()
        self._waking = 0  # sleepers `advance` woke whose task has not run since
        self.sleeps: list[float] = []

    def wall_ms(self) -> int:
        return self._wall_ms

    @property
    def elapsed(self) -> float:
        return self._elapsed

    def monotonic(self) -> float:
        """Elapsed time, as `SystemClock.monotonic` reads it: moves only with `advance()`."""
        return self._elapsed

    @property
    def sleeping(self) -> int:
        """How many sleeps are pending."""
        return sum(1 for _, _, event in self._sleepers if not event.is_set())

    @property
    def waking(self) -> int:
        """How many sleepers were woken and have not returned from their sleep yet:
        0 once every task an `advance` woke has run (a test stepping time waits for it)."""
        return self._waking

    async def sleep(self, seconds: float) -> None:
        """Wait until `advance()` has moved elapsed time `seconds` past now.

        A sleep of zero or less returns after one checkpoint. A cancelled
        sleep is forgotten (it no longer counts in `sleeping`).
        """
        self.sleeps.append(seconds)
        event = anyio.Event()
        entry = (self._elapsed + max(seconds, 0.0), next(self._order), event)
        heapq.heappush(self._sleepers, entry)
        if seconds <= 0:
            self._wake()
        try:
            await event.wait()
        finally:
            if event.is_set():
                self._waking -= 1
            else:
                self._sleepers.remove(entry)
                heapq.heapify(self._sleepers)

    def advance(self, seconds: float) -> None:
        """Move wall and elapsed time forward by `seconds` and wake due sleepers.

        Raises `ValueError` for a negative step: elapsed time never goes back
        (use `jump_wall` to move only the wall clock backwards).
        """
        if seconds < 0:
            raise ValueError("FakeClock.advance: elapsed time cannot go back; use jump_wall")
        self._elapsed += seconds
        self._wall_ms += round(seconds * 1000)
        self._wake()

    def jump_wall(self, seconds: float) -> None:
        """Step only the wall clock by `seconds` (negative steps go back)."""
        self._wall_ms += round(seconds * 1000)

    def _wake(self) -> None:
        while self._sleepers and self._sleepers[0][0] <= self._elapsed:
            _, _, event = heapq.heappop(self._sleepers)
            self._waking += 1
            event.set()
