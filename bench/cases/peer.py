"""The peer for `spread`: APScheduler 4, on SQLite and with its in-memory store.

The same one-shot jobs as `spread` — N targets spread evenly over the same
window — as `DateTrigger` schedules in a SQLite file in the data dir
(`sqlite+aiosqlite`). Lateness runs from a job's scheduled time to the moment
its function starts, which is when APScheduler has acquired the job from its
durable store: the nearest counterpart of a dsh dispatch becoming durable
(APScheduler's job start needs no further write, so the peer does less work).

`spread-peer-memory` runs the same jobs with APScheduler's `MemoryDataStore`
(nothing durable: the fastest the peer can be), so the table shows both.

`storm-peer` and `storm-peer-memory` are the peer for `storm` (issue 36): the
same, with `storm` jobs all due at one instant (a window of zero).

Jobs still not started `peer_patience` seconds after the window are counted
with the lateness they had reached then (`censored`: a lower bound).

Needs the `bench` extra (`apscheduler==4.0.0a6`, `sqlalchemy[asyncio]`, `aiosqlite`);
without it the case reports `{"skipped": "..."}`.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from ..sizes import Size
from ..stats import summary

__all__ = ["spread_peer", "spread_peer_memory", "storm_peer", "storm_peer_memory"]


class _Recorder:
    """Where the job function writes its start times (APScheduler calls it by reference)."""

    started: dict[int, int] = {}  # noqa: RUF012 - one case per process
    expected = 0
    done: anyio.Event | None = None


async def fire(index: int) -> None:
    """The job: note when it started."""
    _Recorder.started[index] = time.time_ns()
    if len(_Recorder.started) == _Recorder.expected and _Recorder.done is not None:
        _Recorder.done.set()


async def spread_peer(size: Size, data_dir: Path) -> dict[str, Any]:
    """The peer with its SQLAlchemy data store on a SQLite file (durable)."""
    try:
        store = _sqlite_store(data_dir)
    except ImportError as error:
        return {"skipped": f"APScheduler 4 is not installed ({error}); pip install -e '.[bench]'"}
    return await _run_peer(size, store, _SQLITE, size.spread, size.spread_window)


async def spread_peer_memory(size: Size, data_dir: Path) -> dict[str, Any]:
    """The peer with its in-memory data store (not durable: its best case)."""
    try:
        from apscheduler.datastores.memory import MemoryDataStore
    except ImportError as error:
        return {"skipped": f"APScheduler 4 is not installed ({error}); pip install -e '.[bench]'"}
    return await _run_peer(size, MemoryDataStore(), _MEMORY, size.spread, size.spread_window)


async def storm_peer(size: Size, data_dir: Path) -> dict[str, Any]:
    """`size.storm` jobs due at one instant, on the SQLite data store (durable)."""
    try:
        store = _sqlite_store(data_dir)
    except ImportError as error:
        return {"skipped": f"APScheduler 4 is not installed ({error}); pip install -e '.[bench]'"}
    return await _run_peer(size, store, _SQLITE, size.storm, 0.0)


async def storm_peer_memory(size: Size, data_dir: Path) -> dict[str, Any]:
    """`size.storm` jobs due at one instant, in memory (not durable: its best case)."""
    try:
        from apscheduler.datastores.memory import MemoryDataStore
    except ImportError as error:
        return {"skipped": f"APScheduler 4 is not installed ({error}); pip install -e '.[bench]'"}
    return await _run_peer(size, MemoryDataStore(), _MEMORY, size.storm, 0.0)


_SQLITE = "APScheduler 4.0.0a6, SQLAlchemyDataStore on sqlite+aiosqlite"
_MEMORY = "APScheduler 4.0.0a6, MemoryDataStore"


def _sqlite_store(data_dir: Path) -> Any:
    from apscheduler.datastores.sqlalchemy import SQLAlchemyDataStore

    data_dir.mkdir(parents=True, exist_ok=True)
    return SQLAlchemyDataStore(f"sqlite+aiosqlite:///{data_dir / 'apscheduler.sqlite'}")


async def _run_peer(size: Size, store: Any, name: str, count: int, window: float) -> dict[str, Any]:
    """`count` one-shot jobs with targets spread evenly over `window` seconds (all at one
    instant when it is 0); lateness from each target to its job's start."""
    from apscheduler import AsyncScheduler
    from apscheduler.triggers.date import DateTrigger

    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    _Recorder.started = {}
    _Recorder.expected = count
    _Recorder.done = anyio.Event()
    async with AsyncScheduler(store) as scheduler:
        # APScheduler's default runs one job of a task at a time; the jobs here are
        # independent reminders, so let them run concurrently (as dsh Sessions do).
        await scheduler.configure_task(fire, max_running_jobs=None)
        # Adding a schedule is one committed transaction: measure the rate on a few
        # far-future ones, then leave room for all of them before the first target.
        far = datetime.fromtimestamp(time.time() + 86_400, UTC)
        started = time.perf_counter()
        for index in range(20):
            await scheduler.add_schedule(
                fire, DateTrigger(far), id=f"calibrate-{index}", kwargs={"index": -1 - index}
            )
        per_add = (time.perf_counter() - started) / 20
        first_ms = time.time_ns() // 1_000_000 + 2000 + round(per_add * count * 1500)
        targets = [first_ms + round(index * window * 1000 / count) for index in range(count)]
        setup = time.perf_counter()
        for index, target in enumerate(targets):
            when = datetime.fromtimestamp(target / 1000, UTC)
            await scheduler.add_schedule(
                fire, DateTrigger(when), id=f"job-{index}", kwargs={"index": index}
            )
        setup_s = time.perf_counter() - setup
        armed_before = time.time_ns() // 1_000_000 < first_ms
        await scheduler.start_in_background()
        patience = (first_ms - time.time_ns() / 1e6) / 1000 + window + size.peer_patience
        with anyio.move_on_after(patience):
            await _Recorder.done.wait()
        gave_up_ns = time.time_ns()
        await scheduler.stop()
    # A job that had not started when the wait ended counts with the lateness it had
    # reached then: a lower bound (`censored` says how many), never a dropped sample.
    late = [
        (_Recorder.started.get(index, gave_up_ns) - target * 1_000_000) / 1e6
        for index, target in enumerate(targets)
    ]
    censored = count - sum(1 for index in range(count) if index in _Recorder.started)
    return {
        "peer": name,
        "jobs": count,
        "window_s": window,
        "setup_seconds": round(setup_s, 3),
        "armed_before_first_target": armed_before,
        "censored": censored,
        "start_ms": summary(late),
    }
