"""Punctuality: how late a reminder's durable dispatch and its follow-up land.

Lateness is measured from the record's `scheduledAt` to (a) the first
`session/flushed` that covers the `schedule/change` dispatch (the dispatch is
durable) and (b) the append of the follow-up `message/user` (source
`schedule`). Every case runs an in-process Host on the JSONL backend in the
data dir, with the real `SystemClock`, the schedule plugin loaded with its
product defaults, and a model that answers at once.

- `idle`: one reminder per Session, targets far enough apart that the host is
  idle at each; the limit is the event loop's own timer lateness, measured in
  the same run by `anyio.sleep` of the same durations.
- `burst`: N Sessions whose reminders are due at the same instant; the time
  until the last dispatch is durable, against N x one raw write+fdatasync
  measured in the same run.
- `spread`: N Sessions with targets spread evenly over a window; the peer
  (APScheduler 4 on SQLite) runs the same one-shot jobs in the `peer` case.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio

from ..sizes import Size
from ..stats import summary
from ..support import (
    DispatchProbe,
    GcPauses,
    bench_host,
    create_data,
    fsync_cost_ms,
    resume_all,
    write_session,
    write_sessions,
)

__all__ = ["burst", "idle", "spread"]


def _prepare(data_dir: Path, targets: dict[str, int], now_ms: int) -> None:
    for session_id, due_ms in targets.items():
        events = [("schedule/change", create_data(1, due_ms, now_ms))]
        write_session(data_dir, session_id, events, created_at=now_ms)


async def _observe_reminders(
    data_dir: Path, plan: dict[str, int], now_ms: int, patience: float
) -> dict[str, Any]:
    """Arm `plan` (Session id → due ms), wait for every dispatch, return the lateness figures."""
    _prepare(data_dir, plan, now_ms)
    os.sync()  # the setup's write-back must not land inside the measurement
    probe = DispatchProbe()
    for session_id, due_ms in plan.items():
        probe.expect(session_id, due_ms)
    first_due = min(plan.values())
    async with bench_host(data_dir) as host:
        host.live.observe(probe)
        with GcPauses() as arming:
            armed_s = await resume_all(host, list(plan))
        armed_ms = time.time_ns() // 1_000_000
        with GcPauses() as running:
            with anyio.move_on_after(patience):
                await probe.done.wait()
    return {
        "gc_while_arming": arming.report(),
        "gc_while_due": running.report(),
        "sessions": len(plan),
        "arm_seconds": round(armed_s, 3),
        "armed_before_first_target": armed_ms < first_due,
        "missing": probe.missing(),
        "durable_ms": summary(probe.lateness_ms("durable")),
        "followup_ms": summary(probe.lateness_ms("followup")),
        "dispatch_append_ms": summary(probe.lateness_ms("dispatched")),
        "_probe": probe,
    }


async def idle(size: Size, data_dir: Path) -> dict[str, Any]:
    """≥ 50 reminders on an idle host vs `anyio.sleep` of the same durations."""
    now_ms = time.time_ns() // 1_000_000
    lead_ms = round(size.idle_lead * 1000)
    gap_ms = round(size.idle_gap * 1000)
    durations = [(lead_ms + index * gap_ms) / 1000 for index in range(size.idle_reminders)]
    # Each reminder in its own Session: the host is idle when each one fires.
    setup_ms = 500 + 5 * size.idle_reminders
    plan = {
        f"idle{index:04d}": now_ms + setup_ms + round(duration * 1000)
        for index, duration in enumerate(durations)
    }
    result = await _observe_reminders(
        data_dir, plan, now_ms, patience=setup_ms / 1000 + max(durations) + 30
    )
    result.pop("_probe")
    result["limit_sleep_ms"] = summary(await _sleep_lateness(durations))
    result["durations_s"] = [min(durations), max(durations)]
    return result


async def _sleep_lateness(durations: list[float]) -> list[float]:
    """How late `anyio.sleep(d)` returns for each `d`, all started together (ms)."""
    late: list[float] = []

    async def one(duration: float) -> None:
        start = time.perf_counter()
        await anyio.sleep(duration)
        late.append((time.perf_counter() - start - duration) * 1000)

    async with anyio.create_task_group() as group:
        for duration in durations:
            group.start_soon(one, duration)
    return late


async def _resume_seconds_each(data_dir: Path, count: int) -> float:
    """Seconds one resume takes here now (Sessions without reminders, a throwaway Host)."""
    now_ms = time.time_ns() // 1_000_000
    ids = [f"calibrate{index:04d}" for index in range(count)]
    write_sessions(
        data_dir,
        ids,
        [("message/user", {"text": "hi", "source": {"kind": "user"}})],
        created_at=now_ms,
    )
    async with bench_host(data_dir) as host:
        seconds = await resume_all(host, ids)
    return seconds / count


async def burst(size: Size, data_dir: Path, sessions: int) -> dict[str, Any]:
    """`sessions` reminders due at one instant, `size.burst_rounds` times: time until the
    last dispatch is durable. The figures are the round with the median ratio (of two,
    the worse); `rounds` keeps every round's (one burst is one sample, and fsync drifts
    between rounds)."""
    per_session = await _resume_seconds_each(data_dir / "calibrate", 50)
    results = [
        await _one_burst(data_dir / f"round{number}", sessions, per_session)
        for number in range(size.burst_rounds)
    ]
    ranked = sorted(results, key=lambda item: item["ratio_to_bound"] or float("inf"))
    result = dict(ranked[len(ranked) // 2])
    result["rounds"] = [
        {key: item[key] for key in ("ratio_to_bound", "last_durable_ms", "fsync_bound_ms")}
        for item in results
    ]
    return result


async def _one_burst(data_dir: Path, sessions: int, per_session: float) -> dict[str, Any]:
    fsync = fsync_cost_ms(data_dir)
    now_ms = time.time_ns() // 1_000_000
    due_ms = now_ms + 1500 + round(per_session * sessions * 1500)
    plan = {f"burst{index:05d}": due_ms for index in range(sessions)}
    result = await _observe_reminders(data_dir, plan, now_ms, patience=60 + sessions * 0.05)
    probe: DispatchProbe = result.pop("_probe")
    durable = probe.lateness_ms("durable")
    last = max(durable) if durable else None
    bound = sessions * float(fsync["median"])
    result.update(
        {
            "fsync_ms": fsync,
            "last_durable_ms": None if last is None else round(last, 3),
            "last_followup_ms": round(max(probe.lateness_ms("followup"), default=0.0), 3),
            "fsync_bound_ms": round(bound, 3),
            "ratio_to_bound": None if last is None else round(last / bound, 2),
        }
    )
    return result


async def spread(size: Size, data_dir: Path) -> dict[str, Any]:
    """N reminders spread evenly over a window: p50/p99 lateness."""
    # Leave room to resume every Session before the first target, at the rate a
    # calibration batch resumes on this machine now.
    per_session = await _resume_seconds_each(data_dir / "calibrate", 100)
    now_ms = time.time_ns() // 1_000_000
    start_ms = now_ms + 2000 + round(per_session * size.spread * 1500)
    window_ms = size.spread_window * 1000
    plan = {
        f"spread{index:05d}": start_ms + round(index * window_ms / size.spread)
        for index in range(size.spread)
    }
    result = await _observe_reminders(
        data_dir, plan, now_ms, patience=(start_ms - now_ms) / 1000 + size.spread_window + 60
    )
    result.pop("_probe")
    result["window_s"] = size.spread_window
    return result
