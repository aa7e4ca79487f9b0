"""Footprint: memory per live Session with an armed reminder, and the CPU of an idle host.

- `memory`: N stored Sessions, each holding one reminder due in an hour, are
  resumed into one Host (each then has a root agent, the plugin's tools,
  ledger and owner, and an entry in the plugin's alarm). The figure is the process's resident
  set growth after a full collection, divided by N (and `tracemalloc`-free:
  tracing would change what it measures). Then `traced` more Sessions are
  resumed under `tracemalloc` and the snapshot diff says what one keeps, by
  the line of dsh (host or plugin) code that allocated it (the innermost
  frame of `host/` or `plugins/` in its traceback; else the innermost frame).
- `idle_cpu`: a Host holding N armed Sessions does nothing for a while; the
  figure is process CPU time (user + system, every thread) over wall time.
"""

from __future__ import annotations

import gc
import os
import resource
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio

from ..sizes import Size
from ..support import bench_host, create_data, resume_all, write_session

__all__ = ["idle_cpu", "memory"]


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _armed_sessions(data_dir: Path, count: int, prefix: str) -> list[str]:
    now_ms = time.time_ns() // 1_000_000
    ids = [f"{prefix}{index:05d}" for index in range(count)]
    for session_id in ids:
        create = create_data(1, now_ms + 3_600_000, now_ms)
        write_session(data_dir, session_id, [("schedule/change", create)], created_at=now_ms)
    os.sync()
    return ids


async def memory(size: Size, data_dir: Path) -> dict[str, Any]:
    count = size.footprint_sessions
    ids = _armed_sessions(data_dir, count + 1, "mem")
    async with bench_host(data_dir) as host:
        # Warm up: the first resume imports and builds what every later one shares.
        await resume_all(host, ids[:1])
        gc.collect()
        before = _rss_bytes()
        seconds = await resume_all(host, ids[1:])
        gc.collect()
        after = _rss_bytes()
        armed = sum(1 for agent in host.agents() if agent.tools.names()) - 1
        traced = await _traced(host, _armed_sessions(data_dir, TRACED, "trace"))
    return {
        "sessions": count,
        "armed": armed,
        "resume_seconds": round(seconds, 2),
        "rss_before_mib": round(before / 2**20, 1),
        "rss_after_mib": round(after / 2**20, 1),
        "kib_per_session": round((after - before) / count / 1024, 2),
        "traced": traced,
    }


TRACED = 200


async def _traced(host: Any, ids: list[str]) -> dict[str, Any]:
    """What one more armed Session keeps, by allocating line (`tracemalloc` diff)."""
    gc.collect()
    tracemalloc.start(30)
    try:
        before = tracemalloc.take_snapshot()
        await resume_all(host, ids)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    owners: dict[str, list[int]] = {}
    for stat in after.compare_to(before, "traceback"):
        where = _owner(stat.traceback)
        entry = owners.setdefault(where, [0, 0])
        entry[0] += stat.size_diff
        entry[1] += stat.count_diff
    total = sum(size for size, _ in owners.values())
    top = sorted(owners.items(), key=lambda item: -item[1][0])[:20]
    return {
        "sessions": len(ids),
        "bytes_per_session": round(total / len(ids)),
        "top": [
            {
                "where": where,
                "bytes": round(size / len(ids)),
                "objects": round(count / len(ids), 1),
            }
            for where, (size, count) in top
        ],
    }


def _owner(traceback: tracemalloc.Traceback) -> str:
    frames = list(traceback)  # oldest first
    for frame in reversed(frames):
        name = frame.filename.replace(os.sep, "/")
        for root in ("/host/dsh/", "/plugins/"):
            if root in name:
                return f"{root.strip('/')}/{name.split(root, 1)[1]}:{frame.lineno}"
    frame = frames[-1]
    return f"{frame.filename.rsplit('/', 2)[-1]}:{frame.lineno}"


async def idle_cpu(size: Size, data_dir: Path) -> dict[str, Any]:
    ids = _armed_sessions(data_dir, size.idle_cpu_sessions, "cpu")
    async with bench_host(data_dir) as host:
        await resume_all(host, ids)
        gc.collect()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu_before = usage.ru_utime + usage.ru_stime
        wall_before = time.perf_counter()
        await anyio.sleep(size.idle_cpu_seconds)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime - cpu_before
        wall = time.perf_counter() - wall_before
    return {
        "sessions": size.idle_cpu_sessions,
        "idle_seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 4),
        "cpu_percent": round(cpu / wall * 100, 3),
    }
