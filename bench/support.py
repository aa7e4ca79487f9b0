"""Shared pieces of the cases: a fast model, stored Sessions written directly, probes.

Reminders are set up the way a restart finds them: a Session's JSONL file
already holds its `schedule/change` create (protocol v1, public), and
`Host.resume` reads, decodes, folds and arms it. That lets a case place
thousands of reminders at exact millisecond targets, which the
`schedule_create` tool (whole seconds from "now") cannot.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import JsonValue

from dsh.host.heap import HeapPolicy
from dsh.host.host import Host
from dsh.models.base import DeltaSink, ModelAdapter, ModelReply, ModelRequest
from dsh.persistence import JsonlBackend
from dsh.plugins.overlay import PluginSpec
from dsh.session.event import SessionEvent
from dsh.session.header import SessionHeader
from dsh.session.live import Observation, SessionEventObserved, SessionFlushed

__all__ = [
    "DispatchProbe",
    "FastModel",
    "GcPauses",
    "bench_host",
    "create_data",
    "format_ms",
    "fsync_cost_ms",
    "fsync_files_ms",
    "resume_all",
    "turn_events",
    "write_session",
    "write_sessions",
]

_datasync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)
SCHEDULE = PluginSpec("tool-schedule")


class FastModel:
    """A model that answers at once with a short text and no tool calls."""

    name = "bench-fast"

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        return ModelReply(text="noted")


def bench_host(
    data_dir: Path,
    *,
    plugins: Sequence[PluginSpec] = (SCHEDULE,),
    model: ModelAdapter | None = None,
) -> Host:
    """An in-process Host on a JSONL backend with the schedule plugin and `FastModel`
    (unless `model` is given), with the collection policy `dsh web` uses (`HeapPolicy`)."""
    return Host(
        backend=JsonlBackend(data_dir),
        model=model or FastModel(),
        plugins=plugins,
        cwd=str(data_dir),
        heap=HeapPolicy(),
    )


@dataclass
class GcPauses:
    """Every cyclic collection while installed (`gc.callbacks`): how long each paused.

    `with GcPauses() as pauses: ...` then `pauses.report()`.
    """

    pauses_ms: list[float] = field(default_factory=list)
    generations: list[int] = field(default_factory=list)
    longest: list[dict[str, Any]] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    _started: float = 0.0
    _started_cpu: float = 0.0
    _count: tuple[int, int, int] = (0, 0, 0)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._count = gc.get_count()
            self._started_cpu = time.thread_time()
            self._started = time.perf_counter()
            return
        ms = (time.perf_counter() - self._started) * 1000
        cpu = (time.thread_time() - self._started_cpu) * 1000
        self.pauses_ms.append(ms)
        self.cpu_ms.append(cpu)
        self.generations.append(int(info.get("generation", -1)))
        if ms > 20:
            self.longest.append(
                {
                    "ms": round(ms, 2),
                    # CPU time the collecting thread spent: far below `ms`, the rest
                    # was the thread waiting (the GIL, or a core taken by others).
                    "cpu_ms": round(cpu, 2),
                    "generation": info.get("generation"),
                    "collected": info.get("collected"),
                    "count_at_start": list(self._count),
                }
            )

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def report(self) -> dict[str, Any]:
        full = [ms for ms, gen in zip(self.pauses_ms, self.generations, strict=True) if gen == 2]
        return {
            "collections": len(self.pauses_ms),
            "full_collections": len(full),
            "max_ms": round(max(self.pauses_ms, default=0.0), 2),
            "max_full_ms": round(max(full, default=0.0), 2),
            "max_cpu_ms": round(max(self.cpu_ms, default=0.0), 2),
            "over_20ms": sum(1 for ms in self.pauses_ms if ms > 20),
            "longest": sorted(self.longest, key=lambda item: -item["ms"])[:5],
        }


def format_ms(epoch_ms: int) -> str:
    """The protocol's `scheduledAt` spelling (UTC, milliseconds, `Z`)."""
    seconds, millis = divmod(epoch_ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def create_data(number: int, due_ms: int, now_ms: int, prompt: str = "stretch") -> JsonValue:
    """A protocol v1 `create` of `rem-<number>` due at `due_ms`."""
    return {
        "version": 1,
        "change": "create",
        "record": {
            "id": f"rem-{number}",
            "kind": "after",
            "prompt": prompt,
            "afterSeconds": max(1, round((due_ms - now_ms) / 1000)),
            "scheduledAt": format_ms(due_ms),
        },
    }


def turn_events(number: int) -> list[tuple[str, JsonValue]]:
    """One ordinary turn that creates reminder `rem-<number>` through the tool."""
    call_id = f"call-{number}"
    return [
        ("message/user", {"text": f"remind me in an hour ({number})", "source": {"kind": "user"}}),
        (
            "message/assistant",
            {
                "text": "",
                "toolCalls": [
                    {
                        "id": call_id,
                        "name": "schedule_create",
                        "arguments": {"prompt": "stretch", "after_seconds": 3600},
                    }
                ],
            },
        ),
        ("tool/result", {"callId": call_id, "name": "schedule_create", "value": {"ok": True}}),
        ("message/assistant", {"text": "Done: I will remind you in an hour.", "toolCalls": []}),
        ("turn/end", {"status": "ok"}),
    ]


def write_session(
    data_dir: Path, session_id: str, events: Iterable[tuple[str, JsonValue]], *, created_at: int
) -> Path:
    """Write a stored Session (public JSONL format) without fsync; returns its path.

    Cases call `os.sync()` once after writing many, so that write-back of the
    setup never lands inside a measurement.
    """
    return write_sessions(data_dir, [session_id], events, created_at=created_at)[0]


def write_sessions(
    data_dir: Path,
    session_ids: Sequence[str],
    events: Iterable[tuple[str, JsonValue]],
    *,
    created_at: int,
) -> list[Path]:
    """`write_session` for several ids holding the same events (serialised once)."""
    directory = data_dir / "sessions"
    directory.mkdir(parents=True, exist_ok=True)
    body = "".join(
        SessionEvent(seq=seq, type=kind, time=created_at, data=data).to_json() + "\n"
        for seq, (kind, data) in enumerate(events)
    )
    paths = []
    for session_id in session_ids:
        header = SessionHeader.model_validate(
            {
                "version": 1,
                "id": session_id,
                "cwd": str(data_dir),
                "createdAt": created_at,
                "origin": {"kind": "web"},
                "lineage": None,
                "delegationDepth": 0,
            }
        )
        path = directory / f"{session_id}.jsonl"
        path.write_text(header.to_json() + "\n" + body, encoding="utf-8")
        paths.append(path)
    return paths


async def all_blocked() -> None:
    """Return once every other task waits on something.

    `anyio.wait_all_tasks_blocked()` does the same check but sleeps 0.1 s
    whenever a task is still runnable, which quantises what it ends by
    0.1 s (a 10k-event resume read 160 ms, 60 of them its own). This yields
    one loop iteration at a time instead. asyncio only (the bench's backend);
    `_fut_waiter` is the future a blocked task waits on, as anyio reads it.
    """
    me = asyncio.current_task()
    while True:
        for task in asyncio.all_tasks():
            waiter = task._fut_waiter  # type: ignore[attr-defined]
            if task is not me and (waiter is None or waiter.done()):
                await asyncio.sleep(0)
                break
        else:
            return


async def resume_all(host: Host, ids: Sequence[str], *, concurrency: int = 8) -> float:
    """Resume every id (at most `concurrency` at a time); returns the seconds it took."""
    limiter = anyio.CapacityLimiter(concurrency)
    start = time.perf_counter()

    async def one(session_id: str) -> None:
        async with limiter:
            await host.resume(session_id)

    async with anyio.create_task_group() as group:
        for session_id in ids:
            group.start_soon(one, session_id)
    await all_blocked()
    return time.perf_counter() - start


def fsync_cost_ms(directory: Path, rounds: int = 200) -> dict[str, float]:
    """Median and p99 of one small `write` + fdatasync on a file in `directory` (made if
    missing)."""
    from .stats import summary

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"fsync-probe-{os.getpid()}.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    line = json.dumps({"seq": 1, "type": "schedule/change", "data": {"id": "rem-1"}}).encode()
    samples: list[float] = []
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            os.write(fd, line + b"\n")
            _datasync(fd)
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        os.close(fd)
        path.unlink()
    return summary(samples, 4)  # type: ignore[return-value]


def fsync_files_ms(directory: Path, count: int) -> dict[str, float]:
    """N separately durable files: one small `write` + fdatasync on each of `count` files
    in `directory` (made if missing), one after another — the disk's bound for `count`
    dispatches each made durable in its own Session's log. The files are created and
    opened before the clock runs (a Session's log exists before its dispatch);
    `total_ms` is the sum, beside the per-file summary."""
    from .stats import summary

    directory.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"seq": 1, "type": "schedule/change", "data": {"id": "rem-1"}}).encode()
    paths = [directory / f"fsync-{index:05d}.jsonl" for index in range(count)]
    for path in paths:
        path.write_bytes(b"")
    os.sync()
    samples: list[float] = []
    for path in paths:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            start = time.perf_counter()
            os.write(fd, line + b"\n")
            _datasync(fd)
            samples.append((time.perf_counter() - start) * 1000)
        finally:
            os.close(fd)
    for path in paths:
        path.unlink()
    figures: dict[str, float] = summary(samples, 4)  # type: ignore[assignment]
    figures["total_ms"] = round(sum(samples), 3)
    return figures


@dataclass
class _Track:
    due_ns: int
    dispatch_seq: int | None = None
    dispatched_ns: int | None = None
    durable_ns: int | None = None
    followup_ns: int | None = None


@dataclass
class DispatchProbe:
    """Watches a store for reminder dispatches and when each became durable.

    `expect(session_id, due_ms)` registers a Session; the probe then records,
    with `time.time_ns()` (the clock `scheduledAt` is written in):

    - the append of its `schedule/change` dispatch;
    - the first `session/flushed` that covers that dispatch (durable);
    - the append of the follow-up `message/user` whose source is `schedule`.

    `done` is set once every registered Session has all three.
    """

    tracks: dict[str, _Track] = field(default_factory=dict)
    complete: int = 0
    done: anyio.Event = field(default_factory=anyio.Event)

    def expect(self, session_id: str, due_ms: int) -> None:
        self.tracks[session_id] = _Track(due_ns=due_ms * 1_000_000)

    def __call__(self, observation: Observation) -> None:
        now = time.time_ns()
        track = self.tracks.get(observation.session.id)
        if track is None:
            return
        if isinstance(observation, SessionEventObserved):
            event = observation.event
            if event.type == "schedule/change" and _change(event.data) == "dispatch":
                track.dispatch_seq = event.seq
                track.dispatched_ns = now
            elif event.type == "message/user" and _source(event.data) == "schedule":
                track.followup_ns = now
                self._check(track)
        elif (
            isinstance(observation, SessionFlushed)
            and track.dispatch_seq is not None
            and track.durable_ns is None
            and observation.through > track.dispatch_seq
        ):
            track.durable_ns = now
            self._check(track)

    def _check(self, track: _Track) -> None:
        if track.durable_ns is not None and track.followup_ns is not None:
            self.complete += 1
            if self.complete == len(self.tracks):
                self.done.set()

    def lateness_ms(self, which: str) -> list[float]:
        """Lateness after `scheduledAt` of `dispatched`, `durable` or `followup`, in ms."""
        values: list[float] = []
        for track in self.tracks.values():
            stamp = getattr(track, f"{which}_ns")
            if stamp is not None:
                values.append((stamp - track.due_ns) / 1e6)
        return values

    def missing(self) -> int:
        return len(self.tracks) - self.complete


def _change(data: JsonValue) -> Any:
    return data.get("change") if isinstance(data, dict) else None


def _source(data: JsonValue) -> Any:
    source = data.get("source") if isinstance(data, dict) else None
    return source.get("kind") if isinstance(source, dict) else None
