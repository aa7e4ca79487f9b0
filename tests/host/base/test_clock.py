from __future__ import annotations

import time

import anyio
import pytest

from dsh.base.clock import Clock, SystemClock
from dsh.testing import FakeClock
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


def test_the_system_clock_reads_wall_time_in_epoch_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    reading = SystemClock().wall_ms()
    after = time.time_ns() // 1_000_000

    assert isinstance(reading, int)
    assert before <= reading <= after


async def test_the_system_clock_sleep_is_cancellable() -> None:
    clock = SystemClock()
    with anyio.move_on_after(0) as scope:
        await clock.sleep(3600)

    assert scope.cancelled_caught


async def test_a_zero_system_sleep_returns() -> None:
    with anyio.fail_after(WAIT):
        await SystemClock().sleep(0)


def test_both_clocks_satisfy_the_clock_protocol() -> None:
    assert isinstance(SystemClock(), Clock)
    assert isinstance(FakeClock(), Clock)
