from __future__ import annotations

from collections.abc import Collection

import pytest

from dsh.persistence.backend import Events
from dsh.persistence.errors import StorageError
from dsh.persistence.memory import MemoryBackend
from dsh.testing import FakeClock
from dsh.wake import MemoryWakeBackend, WakeEntry
from dsh.wake.rebuild import rebuild_index

from .alarm_plugin import set_alarm
from .support import alarm_host

pytestmark = pytest.mark.anyio


class Unreadable(MemoryBackend):
    """Reads of one Session fail (a disk error under its log)."""

    def __init__(self) -> None:
        super().__init__()
        self.bad: set[str] = set()

    async def read(
        self,
        session_id: str,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
    ) -> Events:
        if session_id in self.bad:
            raise StorageError(f"cannot read session {session_id}: Input/output error")
        return await super().read(session_id, start, stop, types=types)


async def test_a_rebuild_keeps_a_log_it_cannot_read_as_dirty_and_reports_it() -> None:
    clock, backend = FakeClock(), Unreadable()
    wake = MemoryWakeBackend()
    async with alarm_host(clock, backend=backend) as host:
        good = await host.create_session()
        set_alarm(good, clock.wall_ms() + 5_000)
        bad = await host.create_session()
        set_alarm(bad, clock.wall_ms() + 1_000)
        await host.close_session(good.session.id)
        await host.close_session(bad.session.id)
        backend.bad.add(bad.session.id)
        report = await rebuild_index(host, wake)
    assert report.sessions == 2 and report.waking == 1
    assert report.next_wake == clock.wall_ms() + 5_000
    assert list(report.unreadable) == [bad.session.id]
    assert "Input/output error" in report.unreadable[bad.session.id]
    assert wake.entries == {
        good.session.id: WakeEntry(clock.wall_ms() + 5_000),
        bad.session.id: WakeEntry(None, dirty=True),
    }
