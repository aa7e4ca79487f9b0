"""Clocks: the wall clock for timestamps and a sleep for waiting.

Everything that reads the time or waits takes a `Clock`, so tests drive time
with `dsh.testing.FakeClock` instead of sleeping. The wall clock may jump in
either direction; code that waits for a wall-clock target must re-read it after
every wake (see the schedule plugin's owner).
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

import anyio

__all__ = ["Clock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """What the host and plugins need from time."""

    def wall_ms(self) -> int:
        """Wall-clock time in epoch milliseconds (may jump)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of elapsed (monotonic) time; cancellable."""
        ...


class SystemClock:
    """The real clock: `time.time()` and `anyio.sleep()`."""

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic(self) -> float:
        """Elapsed time in seconds since an arbitrary start (never jumps)."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)
