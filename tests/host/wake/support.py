"""What the wake tests share: waiting for a condition, and a Host with wake and alarms."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from dsh.host.host import Host
from dsh.persistence.backend import Backend
from dsh.persistence.memory import MemoryBackend
from dsh.testing import FakeClock, FakeModel
from dsh.wake import WakeBackend

from .alarm_plugin import AlarmPlugin


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
