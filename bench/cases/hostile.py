"""Hostile model replies (issue 19): what each costs and what is lost.

A real Host (JSONL backend in the data dir, the schedule plugin with its
product defaults) runs one turn per case against a model that sends one
hostile reply, then "done":

- `calls`: 10,000 `schedule_create` calls in one reply. The host runs at
  most `dsh.base.limits.MAX_TOOL_CALLS` of them and answers the rest
  `too_many_calls`; the plugin creates at most `max_per_turn`.
- `deep`: one call whose arguments nest 250 levels (the first edition stored
  it and could not read its log back), beside an ordinary call.
- `nan`: one call with `NaN` in its arguments, beside an ordinary call (the
  first edition dropped the whole reply).
- `large`: one call with 5 MiB of arguments, beside an ordinary call.

For each: the turn's wall time, the events and bytes it added to the log,
how many reminders exist afterwards, what the stored log says about each
call (how many results, by code), and that the log reads back after a
restart (a fresh backend resumes it).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from pydantic import JsonValue

from dsh.models.base import DeltaSink, ModelReply, ModelRequest, ToolCall
from dsh.persistence import JsonlBackend
from dsh.session.live import Observation

from ..sizes import Size
from ..support import bench_host

__all__ = ["hostile"]


class _OneReply:
    name = "bench-hostile"

    def __init__(self, reply: ModelReply) -> None:
        self.reply: ModelReply | None = reply

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        reply, self.reply = self.reply, None
        return reply or ModelReply(text="done")


def _create(index: int) -> ToolCall:
    arguments = json.dumps({"prompt": f"stretch {index}", "after_seconds": 3600 + index})
    return ToolCall(f"call-{index}", "schedule_create", arguments)


def _error_code(data: dict[str, JsonValue]) -> str:
    """A `tool/result`'s error code, "ok" when it carries no error."""
    error = data.get("error")
    return str(error.get("code", "ok")) if isinstance(error, dict) else "ok"


def _replies(calls: int) -> dict[str, ModelReply]:
    deep = '{"prompt": "x", "after_seconds": 60, "extra": ' + "[" * 250 + "]" * 250 + "}"
    large = '{"prompt": "' + "x" * (5 << 20) + '", "after_seconds": 60}'
    nan = '{"prompt": "x", "after_seconds": NaN}'
    return {
        "calls": ModelReply(
            text=f"{calls} reminders", tool_calls=tuple(_create(i) for i in range(calls))
        ),
        "deep": ModelReply(
            text="deep", tool_calls=(ToolCall("bad", "schedule_create", deep), _create(0))
        ),
        "nan": ModelReply(
            text="nan", tool_calls=(ToolCall("bad", "schedule_create", nan), _create(0))
        ),
        "large": ModelReply(
            text="large", tool_calls=(ToolCall("bad", "schedule_create", large), _create(0))
        ),
    }


async def _one(data_dir: Path, name: str, reply: ModelReply) -> dict[str, Any]:
    directory = data_dir / name
    host = bench_host(directory, model=_OneReply(reply))
    async with host:
        agent = await host.create_session(origin="api")
        session = agent.session
        start = len(session)
        ended = anyio.Event()

        def watch(observation: Observation) -> None:
            event = getattr(observation, "event", None)
            if observation.session is session and event is not None and event.type == "turn/end":
                ended.set()

        host.live.observe(watch)
        started = time.perf_counter()
        agent.submit("go")
        with anyio.fail_after(600):
            await ended.wait()
        await host.live.flush(session)
        seconds = time.perf_counter() - started
        added = list(session.scan(start))
        results = Counter(
            _error_code(data)
            for event in added
            if event.type == "tool/result" and isinstance(data := event.data, dict)
        )
        creates = sum(
            1
            for event in added
            if event.type == "schedule/change"
            and isinstance(data := event.data, dict)
            and data.get("change") == "create"
        )
        session_id = session.id
    path = directory / "sessions" / f"{session_id}.jsonl"
    backend = JsonlBackend(directory)
    stored = await backend.inspect(session_id)
    await backend.aclose()
    return {
        "turn_seconds": round(seconds, 3),
        "calls": len(reply.tool_calls),
        "events_added": len(added),
        "log_bytes": path.stat().st_size,
        "results": dict(results),
        "reminders_created": creates,
        "turn_end": next((e.data for e in added if e.type == "turn/end"), None),
        "reads_back": stored is not None and len(stored.events) == start + len(added),
    }


async def hostile(size: Size, data_dir: Path) -> dict[str, Any]:
    calls = 10_000 if size.name == "full" else 1_000 if size.name == "quick" else 100
    result: dict[str, Any] = {}
    for name, reply in _replies(calls).items():
        result[name] = await _one(data_dir, name, reply)
    return result
