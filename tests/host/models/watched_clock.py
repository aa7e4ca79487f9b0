"""A `FakeClock` that tests can wait on, so retry waits are driven without real time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from dsh.testing import FakeClock
from tests.support.deadlines import WAIT

__all__ = ["WatchedClock", "run_advancing"]

T = TypeVar("T")


class WatchedClock(FakeClock):
    """`await sleeps_started(n)` returns once `n` sleeps have begun in all."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = anyio.Event()

    async def sleep(self, seconds: float) -> None:
        self._changed.set()
        self._changed = anyio.Event()
        await super().sleep(seconds)

    async def sleeps_started(self, count: int) -> None:
        with anyio.fail_after(WAIT):
            while len(self.sleeps) < count:
                await self._changed.wait()


async def run_advancing(clock: WatchedClock, call: Callable[[], Awaitable[T]]) -> T:
    """Run `call()`, advancing `clock` past every sleep it starts; return or raise its outcome."""
    outcome: list[T] = []
    failure: list[Exception] = []
    async with anyio.create_task_group() as group:

        async def run() -> None:
            try:
                outcome.append(await call())
            except Exception as error:
                failure.append(error)
            group.cancel_scope.cancel()

        group.start_soon(run)
        with anyio.fail_after(WAIT):
            while True:
                await clock.sleeps_started(len(clock.sleeps) + 1)
                clock.advance(clock.sleeps[-1])
    if failure:
        raise failure[0]
    return outcome[0]
