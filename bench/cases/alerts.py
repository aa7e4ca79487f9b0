"""Alerts: what telling every page costs beside the flush it follows, and what start-up pays.

- **flush → alert frame**: a real `Host` on the JSONL backend in the data
  dir, a plugin that marks one event type an alert, and one watcher (what a
  `WS /api/live` connection is). Each round appends that event to one of
  `alert_sessions` live Sessions and flushes it; the figure is the time from
  the flush's return to the watcher's alert frame: the Host asks the plugin,
  records the alert (one line, one fsync in `attention.jsonl`) and tells the
  watcher. Beside it, the flush itself (one line, one fsync in the log): the
  alert costs about one more durable write, off the flusher's path.
- **start-up**: `attention.jsonl` holding `attention_sessions` Sessions with
  three alerts each, one read: the time until the first `unread()` answers
  (open, parse every line, build the state), beside reading the file and
  `json.loads` of each line. That is all a start pays for unread counts: no
  log is read.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio

from dsh import SessionEvent, SessionLog, hookimpl
from dsh.attention.alert import Alert
from dsh.attention.jsonl import JsonlAttentionBackend
from dsh.host.host import Host
from dsh.persistence.jsonl import JsonlBackend

from ..sizes import Size
from ..stats import summary
from ..support import FastModel

__all__ = ["alerts"]

RING = "bench/ring"


class _Ringer:
    @hookimpl
    def dsh_session_alert(self, session: SessionLog, event: SessionEvent) -> Any:
        if event.type != RING:
            return None
        return {"title": "stretch", "body": "due now", "tag": f"{session.id}/{event.seq}"}


async def _flush_to_frame(size: Size, data_dir: Path) -> dict[str, Any]:
    arrived = anyio.Event()
    flush_ms: list[float] = []
    frame_ms: list[float] = []

    def watcher(frame: dict[str, Any]) -> None:
        if frame["kind"] == "alert":
            arrived.set()

    async with Host(backend=JsonlBackend(data_dir / "logs"), model=FastModel()) as host:
        host.pm.register(_Ringer(), name="ringer")
        agents = [await host.create_session() for _ in range(size.alert_sessions)]
        await host.attention.settled()
        await host.attention.watch(watcher)
        for round_ in range(size.alert_rounds):
            session = agents[round_ % len(agents)].session
            arrived = anyio.Event()
            host.live.append(session, RING, {"round": round_})
            start = time.perf_counter()
            assert await host.live.flush(session)
            flushed = time.perf_counter()
            await arrived.wait()
            frame_ms.append((time.perf_counter() - flushed) * 1000)
            flush_ms.append((flushed - start) * 1000)
        unread = await host.attention.unread()
    return {
        "rounds": size.alert_rounds,
        "sessions": size.alert_sessions,
        "frame_after_flush_ms": summary(frame_ms),
        "flush_ms": summary(flush_ms),
        "unread_total": sum(unread.values()),
    }


async def _open(size: Size, data_dir: Path) -> dict[str, Any]:
    directory = data_dir / "attention"
    writer = JsonlAttentionBackend(directory)
    for number in range(size.attention_sessions):
        session_id = f"s{number:015d}"
        alerts = [Alert(session_id, seq, "stretch", "due now", f"t{seq}", 1) for seq in (3, 7, 9)]
        writer.state.record(session_id, alerts, 10)
    await writer.record("s" + "0" * 15, [], 10)  # the first write: a snapshot of it all
    await writer.aclose()
    path = directory / "attention.jsonl"
    opened: list[float] = []
    parsed: list[float] = []
    for _ in range(3):
        start = time.perf_counter()
        reader = JsonlAttentionBackend(directory)
        counts = await reader.unread()
        opened.append((time.perf_counter() - start) * 1000)
        await reader.aclose()
        assert len(counts) == size.attention_sessions
        start = time.perf_counter()
        for line in path.read_bytes().splitlines():
            json.loads(line)
        parsed.append((time.perf_counter() - start) * 1000)
    return {
        "sessions": size.attention_sessions,
        "file_bytes": path.stat().st_size,
        "open_ms": summary(opened),
        "json_loads_ms": summary(parsed),
    }


async def alerts(size: Size, data_dir: Path) -> dict[str, Any]:
    """Both figures (module docstring)."""
    return {"live": await _flush_to_frame(size, data_dir), "start": await _open(size, data_dir)}
