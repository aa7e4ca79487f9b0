"""Resume: making a long cold Session live, beside parsing its file with `json.loads`.

A Session of N events (ordinary turns that create reminders, their dispatches
and follow-ups; one reminder left active an hour out) is written in the
public JSONL format. Each round times `Host.resume(id)` with the schedule
plugin loaded until every task is blocked again: read, decode and validate
every event, prove the stored prefix, append and fsync the `session/end-seed`,
publish the agent, install the plugin, fold the schedule log and arm the
owner's timer. The limit is reading the same file and `json.loads` of each
line, measured in the same run; `inspect` (the backend's read + decode alone)
is reported beside it so the cost splits cleanly.

Every round after the first reads a log the backend has proven (it wrote the
last lines and read the rest in full before, `dsh.persistence.jsonl.proven`):
what a host restarted after a clean stop or a hibernation finds, through the
sidecar it left. `first_read` times the other case apart: a fresh host each
round and no sidecar, so every line is read in full — a log written by
another tool, or by an edition without proofs.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from ..sizes import Size
from ..stats import summary
from ..support import all_blocked, bench_host, create_data, turn_events, write_session

__all__ = ["resume", "session_events"]


def session_events(length: int, now_ms: int) -> list[tuple[str, JsonValue]]:
    """`length` events of ordinary turns; every reminder but the last is dispatched."""
    events: list[tuple[str, JsonValue]] = []
    number = 0
    while len(events) < length:
        number += 1
        events += turn_events(number)
        events.append(("schedule/change", create_data(number, now_ms + 3_600_000, now_ms)))
        if len(events) + 8 < length:
            dispatch: JsonValue = {"version": 1, "change": "dispatch", "id": f"rem-{number}"}
            events.append(("schedule/change", dispatch))
            frame = f"[reminder rem-{number}] stretch"
            events.append(("message/user", {"text": frame, "source": {"kind": "schedule"}}))
            events.append(("message/assistant", {"text": "Time to stretch!", "toolCalls": []}))
            events.append(("turn/end", {"status": "ok"}))
    # Trim from the end but keep the last create (the armed reminder) inside.
    while len(events) > length:
        index = max(i for i, (kind, _) in enumerate(events) if kind != "schedule/change")
        del events[index]
    return events


def _raw_parse(path: Path) -> float:
    start = time.perf_counter()
    data = path.read_bytes()
    for line in data.splitlines():
        json.loads(line)
    return time.perf_counter() - start


async def _rounds(data_dir: Path, session_id: str, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"resume": [], "inspect": [], "raw": []}
    path = data_dir / "sessions" / f"{session_id}.jsonl"
    async with bench_host(data_dir) as host:
        for _ in range(rounds):
            times["raw"].append(_raw_parse(path))
            start = time.perf_counter()
            await host.backend.inspect(session_id)
            times["inspect"].append(time.perf_counter() - start)
            start = time.perf_counter()
            agent, resumed = await host.resume(session_id)
            await all_blocked()
            times["resume"].append(time.perf_counter() - start)
            assert resumed and agent.tools.names(), "the schedule plugin did not install"
            await host.close_session(session_id)
    return times


async def _first_reads(data_dir: Path, session_id: str, rounds: int) -> list[float]:
    """`Host.resume` of a log no backend has proven: a fresh host each round, no sidecar."""
    times: list[float] = []
    sidecar = data_dir / "sessions" / f".{session_id}.jsonl.idx"
    for _ in range(rounds):
        sidecar.unlink(missing_ok=True)
        async with bench_host(data_dir) as host:
            start = time.perf_counter()
            await host.resume(session_id)
            await all_blocked()
            times.append(time.perf_counter() - start)
            await host.close_session(session_id)
    return times


async def resume(size: Size, data_dir: Path) -> dict[str, Any]:
    now_ms = time.time_ns() // 1_000_000
    result: dict[str, Any] = {"rounds": size.resume_rounds}
    for length in size.resume_lengths:
        session_id = f"resume{length}"
        path = write_session(
            data_dir, session_id, session_events(length, now_ms), created_at=now_ms
        )
        os.sync()
        times = await _rounds(data_dir, session_id, size.resume_rounds)
        first_reads = await _first_reads(data_dir, session_id, size.resume_rounds)
        resume_ms = summary([t * 1000 for t in times["resume"]], 1)
        raw_ms = summary([t * 1000 for t in times["raw"]], 1)
        first_ms = summary([t * 1000 for t in first_reads], 1)
        ratio = float(resume_ms["median"] or 0) / float(raw_ms["median"] or 1)
        first_ratio = float(first_ms["median"] or 0) / float(raw_ms["median"] or 1)
        result[f"events_{length}"] = {
            "file_mib": round(path.stat().st_size / 2**20, 2),
            "resume_ms": resume_ms,
            "inspect_ms": summary([t * 1000 for t in times["inspect"]], 1),
            "first_read_ms": first_ms,
            "first_read_ratio": round(first_ratio, 2),
            "raw_json_loads_ms": raw_ms,
            "ratio_to_raw": round(ratio, 2),
        }
    return result
