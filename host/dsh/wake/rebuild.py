"""Rebuilding the wake index by hand from every stored log (`dsh index rebuild`).

What start-up does on its own when the index is missing, unreadable, corrupt
or of another format, done without starting any agent: every stored
Session's log is read (ranged, type-filtered, in worker threads) and the
loaded plugins' `dsh_session_wake_at` answers are written as one atomic
snapshot. A log that cannot be read gets a dirty entry, so that the next
start tries it again instead of forgetting it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import anyio

from .backend import WakeBackend, WakeEntry
from .lifecycle import LifecycleHost

__all__ = ["RebuildReport", "rebuild_index"]

READERS = 4


@dataclass(slots=True)
class RebuildReport:
    """What a rebuild found: how many logs it read, the entries, the unreadable ones."""

    sessions: int = 0
    entries: dict[str, WakeEntry] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)

    @property
    def waking(self) -> int:
        return sum(1 for entry in self.entries.values() if entry.wake_at is not None)

    @property
    def next_wake(self) -> int | None:
        times = [entry.wake_at for entry in self.entries.values() if entry.wake_at is not None]
        return min(times, default=None)


async def rebuild_index(host: LifecycleHost, backend: WakeBackend) -> RebuildReport:
    """Derive every stored Session's entry with `host`'s plugins and write them to `backend`.

    Raises `WakeBackendError` when the snapshot cannot be written, and what
    listing the stored Sessions raises (`StorageError`).
    """
    report = RebuildReport()
    ids = deque(await host.stored_ids())
    report.sessions = len(ids)

    async def reader() -> None:
        while ids:
            session_id = ids.popleft()
            try:
                wake_at = await host.session_wake_at(session_id)
            except Exception as error:
                report.unreadable[session_id] = str(error)
                report.entries[session_id] = WakeEntry(None, dirty=True)
                continue
            if wake_at is not None:
                report.entries[session_id] = WakeEntry(wake_at)

    async with anyio.create_task_group() as group:
        for _ in range(READERS):
            group.start_soon(reader)
    await backend.replace(report.entries)
    await backend.aclose()
    return report
