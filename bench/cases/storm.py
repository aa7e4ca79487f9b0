"""The 9 o'clock storm (issue 36): N reminders, one per Session, due at the same instant.

- `storm`: N cold Sessions after a restart (which leaves room to resume
  all of them before the target), woken by the wake index alone
  (the overlay's settings: index on, hibernation after 2 s), nobody touching
  anything. The setup is `wake`'s (the logs and the index the previous life
  left); the figures are the lateness of each durable dispatch and of each
  follow-up after the shared target, missing and duplicated dispatches (read
  back from the stored logs), peak RSS and peak open descriptors.
- `storm-hot`: the same N reminders with every Session already live (resumed
  before the target, as `burst` does it).

Beside each, in the same process just before the storm: N × one `write` +
`fdatasync` of N separate files (`fsync_files_ms`), the disk's bound for N
separately durable dispatches; the rows give p99 ÷ that bound. The peer,
APScheduler 4 firing N jobs at one instant, runs in `storm-peer` (SQLite)
and `storm-peer-memory` (`bench.cases.peer`).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import time
from pathlib import Path
from typing import Any

import anyio

from dsh.wake import JsonlWakeBackend, WakeEntry

from ..sizes import Size
from ..stats import summary
from ..support import DispatchProbe, fsync_files_ms
from .punctuality import _observe_reminders, _resume_seconds_each
from .wake import (
    HIBERNATE_AFTER,
    _raise_descriptor_limit,
    _write,
    descriptors,
    rss_mb,
    wake_host,
)

__all__ = ["storm", "storm_hot"]


def _peak_rss_mb() -> float:
    """The process's peak RSS so far (`ru_maxrss`, KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _dispatches(data_dir: Path) -> dict[str, int]:
    """Stored `schedule/change` dispatches per Session, read back from the logs."""
    counts: dict[str, int] = {}
    for path in (data_dir / "sessions").glob("*.jsonl"):
        with path.open(encoding="utf-8") as log:
            count = 0
            for line in log:
                if '"schedule/change"' in line and '"dispatch"' in line:
                    data = json.loads(line).get("data") or {}
                    count += data.get("change") == "dispatch"
        counts[path.stem] = count
    return counts


def _figures(probe: DispatchProbe, data_dir: Path, bound_ms: float) -> dict[str, Any]:
    """Lateness, the stored dispatch counts and each p99's ratio to the fsync bound."""
    stored = _dispatches(data_dir)
    durable = summary(probe.lateness_ms("durable"))
    followup = summary(probe.lateness_ms("followup"))
    return {
        "missing": probe.missing(),
        "stored_missing": sum(1 for sid in probe.tracks if stored.get(sid, 0) == 0),
        "duplicated": sum(1 for count in stored.values() if count > 1),
        "durable_ms": durable,
        "followup_ms": followup,
        "durable_p99_to_bound": _ratio(durable["p99"], bound_ms),
        "followup_p99_to_bound": _ratio(followup["p99"], bound_ms),
    }


def _ratio(value: Any, bound: float) -> float | None:
    return None if value is None or not bound else round(float(value) / bound, 2)


def _bound(data_dir: Path, sessions: int) -> dict[str, Any]:
    os.sync()  # the setup's write-back must not land inside the probe
    fsync = fsync_files_ms(data_dir / "fsync-files", sessions)
    return {"fsync_files_ms": fsync, "fsync_bound_ms": fsync["total_ms"]}


class _Peaks:
    """Samples RSS and open descriptors every 50 ms while entered (a background task)."""

    def __init__(self) -> None:
        self.rss_mb = 0.0
        self.descriptors = 0

    def _sample(self) -> None:
        self.rss_mb = max(self.rss_mb, rss_mb())
        self.descriptors = max(self.descriptors, descriptors())

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        self._sample()
        task_status.started()
        while True:
            await anyio.sleep(0.05)
            self._sample()

    def report(self, before_rss: float, sessions: int) -> dict[str, Any]:
        """The peaks, and the peak RSS growth per Session (what making one live costs,
        its storm turn included)."""
        return {
            "rss_mb": {
                "before": before_rss,
                "peak": self.rss_mb,
                "peak_process": _peak_rss_mb(),
            },
            "rss_kib_per_session": round((self.rss_mb - before_rss) * 1024 / sessions, 1),
            "peak_descriptors": self.descriptors,
        }


async def storm(size: Size, data_dir: Path) -> dict[str, Any]:
    """N cold Sessions, one reminder each, all due at one instant after a restart."""
    _raise_descriptor_limit()
    sessions = size.storm
    data = data_dir / "cold"
    ids = [f"storm{index:05d}" for index in range(sessions)]
    now_ms = time.time_ns() // 1_000_000
    started = time.perf_counter()
    _write(data, dict.fromkeys(ids, now_ms + 3_600_000), now_ms)
    write_s = time.perf_counter() - started
    bound = _bound(data_dir, sessions)
    per_session = await _resume_seconds_each(data_dir / "calibrate", 50)
    # The target leaves room for the host to start and read its index (the
    # wake case's margin) and to resume every Session before it (the hot
    # storm's): the restart comes well before 9 o'clock, and a host that wakes
    # a storm ahead has the time to. Everything after that is the storm's own.
    now_ms = time.time_ns() // 1_000_000
    due_ms = now_ms + round((write_s * 1.5 + 5.0 + per_session * sessions * 1.5) * 1000)
    _write(data, dict.fromkeys(ids, due_ms), now_ms)
    wake = JsonlWakeBackend(data)
    await wake.replace({session_id: WakeEntry(due_ms) for session_id in ids})
    await wake.aclose()
    os.sync()
    probe = DispatchProbe()
    for session_id in ids:
        probe.expect(session_id, due_ms)
    before_rss = rss_mb()
    peaks = _Peaks()
    async with anyio.create_task_group() as group:
        await group.start(peaks.run)
        async with wake_host(data, idle_seconds=HIBERNATE_AFTER) as host:
            host.live.observe(probe)
            armed_before = time.time_ns() // 1_000_000 < due_ms - 2_000
            gc.collect()
            with anyio.move_on_after((due_ms - now_ms) / 1000 + 60 + sessions * 0.01):
                await probe.done.wait()
            index = host.lifecycle.index
            woken = 0 if index is None else index.woken
        group.cancel_scope.cancel()
    return {
        "sessions": sessions,
        "armed_before_first_target": armed_before,
        "woken": woken,
        **_figures(probe, data, bound["fsync_bound_ms"]),
        **bound,
        **peaks.report(before_rss, sessions),
    }


async def storm_hot(size: Size, data_dir: Path) -> dict[str, Any]:
    """The same storm with every Session live before the target (`burst`'s machinery)."""
    _raise_descriptor_limit()
    sessions = size.storm
    per_session = await _resume_seconds_each(data_dir / "calibrate", 50)
    bound = _bound(data_dir, sessions)
    now_ms = time.time_ns() // 1_000_000
    due_ms = now_ms + 2000 + round(per_session * sessions * 1500)
    plan = {f"hot{index:05d}": due_ms for index in range(sessions)}
    data = data_dir / "hot"
    before_rss = rss_mb()
    peaks = _Peaks()
    async with anyio.create_task_group() as group:
        await group.start(peaks.run)
        result = await _observe_reminders(data, plan, now_ms, patience=60 + sessions * 0.01)
        group.cancel_scope.cancel()
    probe: DispatchProbe = result.pop("_probe")
    return {
        "sessions": sessions,
        "armed_before_first_target": result["armed_before_first_target"],
        "arm_seconds": result["arm_seconds"],
        **_figures(probe, data, bound["fsync_bound_ms"]),
        **bound,
        **peaks.report(before_rss, sessions),
        "gc_while_due": result["gc_while_due"],
    }
