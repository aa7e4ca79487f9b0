"""Waking cold Sessions and hibernating idle ones (issue 15).

- `wake`: N cold Sessions, each holding one reminder, their targets spread
  over a window that starts after a restart. Three figures, same run:
  (a) start-up of a Host with the wake index on: `Host.__aenter__` on an
  empty data dir, on the N Sessions with their index file, and on them with
  the index deleted (a full scan of every log, which runs in the background:
  its time to `ready` is reported apart), plus a real `dsh web --overlay
  overlays/web-schedule-wake` spawned → first 200 from `/api/health` on the
  empty and the indexed data dir; (b) the lateness of each reminder's
  durable dispatch after its target, with nobody resuming anything (the
  index wakes each Session; hibernation closes it 2 s after delivery, so
  descriptors stay bounded); (c) the RSS of that host.
- `hibernate`: a host serves N Sessions (create, one message and its turn),
  once with hibernation (`idle_seconds` 1) and once without, each in a
  fresh process: RSS and open descriptors afterwards.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from tests.support.webhost import REPO

from dsh.host.heap import HeapPolicy
from dsh.host.host import Host
from dsh.persistence import JsonlBackend
from dsh.wake import JsonlWakeBackend, WakeEntry

from ..sizes import Size
from ..stats import summary
from ..support import SCHEDULE, DispatchProbe, FastModel, create_data, write_session
from .web import first_200_ms

__all__ = ["hibernate", "wake"]

WAKE_OVERLAY = REPO / "overlays" / "web-schedule-wake"
HIBERNATE_AFTER = 2.0


def _raise_descriptor_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def wake_host(data_dir: Path, *, idle_seconds: float | None = None) -> Host:
    """A Host as `dsh web --overlay overlays/web-schedule-wake` makes one (its collection
    policy included)."""
    return Host(
        backend=JsonlBackend(data_dir),
        model=FastModel(),
        plugins=(SCHEDULE,),
        cwd=str(data_dir),
        wake_backend=JsonlWakeBackend(data_dir),
        idle_seconds=idle_seconds,
        heap=HeapPolicy(),
    )


def _write(data_dir: Path, plan: dict[str, int], now_ms: int) -> None:
    for session_id, due_ms in plan.items():
        write_session(
            data_dir,
            session_id,
            [("schedule/change", create_data(1, due_ms, now_ms))],
            created_at=now_ms,
        )
    os.sync()


async def _start(data_dir: Path) -> dict[str, Any]:
    """One Host start: seconds to enter, seconds until every entry is known."""
    host = wake_host(data_dir)
    start = time.perf_counter()
    async with host:
        entered = time.perf_counter() - start
        index = host.lifecycle.index
        assert index is not None
        await index.ready.wait()
        ready = time.perf_counter() - start
        armed = index.armed
        rebuilt = index.rebuilt
    return {"enter_s": entered, "ready_s": ready, "armed": armed, "rebuilt": rebuilt}


async def _startups(size: Size, data_dir: Path) -> dict[str, Any]:
    now_ms = time.time_ns() // 1_000_000
    far = {f"far{index:05d}": now_ms + 3_600_000 + index for index in range(size.wake_sessions)}
    indexed = data_dir / "startup"
    began = time.perf_counter()
    _write(indexed, far, now_ms)
    write_s = time.perf_counter() - began
    empty = data_dir / "empty"
    empty.mkdir()
    runs: dict[str, list[dict[str, Any]]] = {"empty": [], "indexed": [], "full_scan": []}
    await _start(indexed)  # builds the index once (and warms the page cache like a restart)
    await _start(empty)
    for _ in range(size.wake_rounds):
        runs["empty"].append(await _start(empty))
        runs["indexed"].append(await _start(indexed))
        (indexed / "wake-index.jsonl").unlink()
        runs["full_scan"].append(await _start(indexed))
    figures: dict[str, Any] = {}
    for name, samples in runs.items():
        figures[name] = {
            "enter_ms": summary([s["enter_s"] * 1000 for s in samples], 1),
            "ready_ms": summary([s["ready_s"] * 1000 for s in samples], 1),
            "armed": samples[-1]["armed"],
            "rebuilt": samples[-1]["rebuilt"],
        }
    figures["process"] = {
        "empty_first_200_ms": _first_200(empty, size.wake_rounds),
        "indexed_first_200_ms": _first_200(indexed, size.wake_rounds),
    }
    empty_ms = float(figures["process"]["empty_first_200_ms"]["median"])
    indexed_ms = float(figures["process"]["indexed_first_200_ms"]["median"])
    figures["indexed_vs_empty"] = round(indexed_ms / empty_ms, 2) if empty_ms else None
    figures["write_s"] = write_s
    return figures


def _first_200(data_dir: Path, rounds: int) -> dict[str, Any]:
    """`dsh web --overlay overlays/web-schedule-wake` spawned → first 200 from /api/health."""
    samples = [first_200_ms(WAKE_OVERLAY, data_dir, timeout=60) for _ in range(rounds)]
    return summary(samples, 1)


async def _lateness(size: Size, data_dir: Path, write_s: float) -> dict[str, Any]:
    """Reminders due over the window after a restart, woken by the index alone.

    The life before the restart is what it leaves on disk: the logs, and the
    index it wrote as its Sessions went cold (a snapshot of their wake times,
    written here directly: a rebuild would be a full scan, measured apart).
    """
    data = data_dir / "lateness"
    now_ms = time.time_ns() // 1_000_000
    start_ms = now_ms + round((write_s * 1.5 + 5.0) * 1000)
    window_ms = size.wake_window * 1000
    plan = {
        f"wake{index:05d}": start_ms + round(index * window_ms / size.wake_sessions)
        for index in range(size.wake_sessions)
    }
    _write(data, plan, now_ms)
    wake = JsonlWakeBackend(data)
    await wake.replace({session_id: WakeEntry(due) for session_id, due in plan.items()})
    await wake.aclose()
    before_rss = rss_mb()
    probe = DispatchProbe()
    for session_id, due_ms in plan.items():
        probe.expect(session_id, due_ms)
    peak_descriptors = 0
    async with wake_host(data, idle_seconds=HIBERNATE_AFTER) as host:
        host.live.observe(probe)
        armed_before_first = time.time_ns() // 1_000_000 < start_ms - 2_000
        gc.collect()
        with anyio.move_on_after((start_ms - now_ms) / 1000 + size.wake_window + 60):
            while not probe.done.is_set():
                peak_descriptors = max(peak_descriptors, descriptors())
                with anyio.move_on_after(0.25):
                    await probe.done.wait()
        after_rss = rss_mb()
        index = host.lifecycle.index
        hibernator = host.lifecycle.hibernator
        woken = 0 if index is None else index.woken
        hibernated = 0 if hibernator is None else hibernator.hibernated
    return {
        "sessions": size.wake_sessions,
        "window_s": size.wake_window,
        "armed_before_first_target": armed_before_first,
        "missing": probe.missing(),
        "woken": woken,
        "hibernated": hibernated,
        "durable_ms": summary(probe.lateness_ms("durable")),
        "followup_ms": summary(probe.lateness_ms("followup")),
        "rss_mb": {"before_start": before_rss, "after_window": after_rss},
        "peak_descriptors": peak_descriptors,
    }


async def wake(size: Size, data_dir: Path) -> dict[str, Any]:
    _raise_descriptor_limit()
    startups = await _startups(size, data_dir)
    write_s = startups.pop("write_s")
    return {"startup": startups, "after_restart": await _lateness(size, data_dir, write_s)}


def hibernate(size: Size, data_dir: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"sessions": size.hibernate_sessions}
    for name, idle in (("with_hibernation", 1.0), ("without", 0.0)):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.cases.wake",
                str(data_dir / name),
                str(size.hibernate_sessions),
                str(idle),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
            timeout=1800,
        )
        result[name] = json.loads(done.stdout)
    return result


async def _serve(data_dir: Path, sessions: int, idle: float) -> dict[str, Any]:
    """Serve `sessions` Sessions (create, one message, its turn) and report the footprint."""
    _raise_descriptor_limit()
    host = Host(
        backend=JsonlBackend(data_dir),
        model=FastModel(),
        plugins=(SCHEDULE,),
        cwd=str(data_dir),
        idle_seconds=idle or None,
        heap=HeapPolicy(),
    )
    base_rss, base_fds = rss_mb(), descriptors()
    started = time.perf_counter()
    async with host:
        for _ in range(sessions):
            agent = await host.create_session()
            agent.submit("hello")
            while agent.pending or agent.phase != "idle":
                await agent.when_idle()
        served_s = time.perf_counter() - started
        if idle:
            for _ in range(round((idle * 3 + 30) * 10)):  # until all hibernated, at most that
                if not host.agents():
                    break
                await anyio.sleep(0.1)
        gc.collect()
        return {
            "idle_seconds": idle or None,
            "served_s": round(served_s, 1),
            "live_sessions": len(host.agents()),
            "rss_mb": round(rss_mb() - base_rss, 1),
            "open_descriptors": descriptors() - base_fds,
        }


if __name__ == "__main__":
    figures = anyio.run(_serve, Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
    sys.stdout.write(json.dumps(figures) + "\n")
