"""What the wake tests share: waiting for a condition, and a Host with wake and alarms."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel

from dsh.host.host import Host
from dsh.persistence.backend import Backend
from dsh.persistence.memory import MemoryBackend
from dsh.testing import FakeClock, FakeModel
from dsh.wake import WakeBackend
from tests.support.deadlines import WAIT

from .alarm_plugin import AlarmPlugin


async def until(condition: Callable[[], object], what: str = "the condition") -> None:
    """Let the loop run until `condition()` is true; fail after `WAIT` seconds."""
    with anyio.fail_after(WAIT):
        while not condition():
            await anyio.lowlevel.checkpoint()
    assert condition(), what


@asynccontextmanager
async def alarm_host(
    clock: FakeClock,
    *,
    backend: Backend | None = None,
    wake_backend: WakeBackend | None = None,
    idle_seconds: float | None = None,
    plugin: AlarmPlugin | None = None,
) -> AsyncIterator[Host]:
    """A running Host with the alarm plugin registered before it starts."""
    host = Host(
        backend=backend if backend is not None else MemoryBackend(),
        model=FakeModel(),
        clock=clock,
        cwd="/dsh-test",
        wake_backend=wake_backend,
        idle_seconds=idle_seconds,
    )
    host.pm.register(plugin if plugin is not None else AlarmPlugin(), name="alarm")
    async with host:
        yield host
