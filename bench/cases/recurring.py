"""Recurring punctuality: N Sessions, each with a reminder every few seconds, for a minute.

Full size: 1,000 Sessions × one reminder every 10 s for 60 s — 6,000
occurrences. Each Session's JSONL file holds a protocol v2 `every` record
(`count` = occurrences in the window, so the series ends inside it) whose
first occurrences are spread evenly over one interval, so the host delivers
about N / interval occurrences a second throughout. Every case Host is the
same as `spread`'s: JSONL in the data dir, the real clock, the plugin with its
product defaults (`min_interval_seconds` only limits the tools; these records
are written directly), a model that answers at once.

Figures: lateness from each occurrence to its durable dispatch (the first
`session/flushed` covering it) and to its follow-up `message/user`; and the
delivery check the case exists for — every occurrence delivered exactly once
(the stored logs hold each expected `occurrenceAt` once, none extra, none
with `missed` > 0, none missing).
"""

from __future__ import annotations

import calendar
import gc
import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import JsonValue

from dsh.session.live import Observation, SessionEventObserved, SessionFlushed

from ..sizes import Size
from ..stats import summary
from ..support import bench_host, format_ms, resume_all, write_session
from .punctuality import _resume_seconds_each

__all__ = ["spread_recurring"]


def every_record(first_ms: int, every: int, count: int) -> dict[str, Any]:
    """A protocol v2 `create` of `rem-1`: every `every` s from `first_ms`, `count` times."""
    stamp = format_ms(first_ms)
    return {
        "version": 2,
        "change": "create",
        "record": {
            "id": "rem-1",
            "prompt": "drink water",
            "rule": {"kind": "every", "seconds": every},
            "timeZone": "UTC",
            "firstAt": stamp,
            "nextAt": stamp,
            "count": count,
            "misfire": "latest",
            "paused": False,
            "revision": 1,
        },
    }


@dataclass
class RecurringProbe:
    """When each occurrence's dispatch was appended, became durable, and was followed up."""

    expected: dict[str, list[int]]
    dispatched: dict[tuple[str, int], int] = field(default_factory=dict)
    durable: dict[tuple[str, int], int] = field(default_factory=dict)
    followup: dict[tuple[str, int], int] = field(default_factory=dict)
    pending: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # id → (seq, occ)
    repeats: int = 0
    done: anyio.Event = field(default_factory=anyio.Event)

    def __call__(self, observation: Observation) -> None:
        now = time.time_ns()
        session_id = observation.session.id
        if session_id not in self.expected:
            return
        if isinstance(observation, SessionEventObserved):
            event = observation.event
            data = event.data if isinstance(event.data, dict) else {}
            if event.type == "schedule/change" and data.get("change") == "dispatch":
                key = (session_id, _ms(str(data["occurrenceAt"])))
                self.repeats += key in self.dispatched
                self.dispatched[key] = now
                self.pending.setdefault(session_id, []).append((event.seq, key[1]))
            elif event.type == "message/user" and (source := _reminder_source(data)) is not None:
                self.followup.setdefault((session_id, _ms(str(source["occurrenceAt"]))), now)
                self._check()
        elif isinstance(observation, SessionFlushed):
            waiting = self.pending.get(session_id, [])
            for seq, occurrence in list(waiting):
                if observation.through > seq:
                    self.durable.setdefault((session_id, occurrence), now)
                    waiting.remove((seq, occurrence))
            self._check()

    def _check(self) -> None:
        total = sum(len(occurrences) for occurrences in self.expected.values())
        if len(self.durable) >= total and len(self.followup) >= total:
            self.done.set()

    def lateness_ms(self, which: dict[tuple[str, int], int]) -> list[float]:
        return [(stamp - occurrence * 1_000_000) / 1e6 for (_, occurrence), stamp in which.items()]


def _ms(text: str) -> int:
    """Epoch ms of a protocol timestamp (`2026-01-01T00:00:10.000Z`)."""
    return calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")) * 1000 + int(text[20:23])


def _reminder_source(data: dict[str, JsonValue]) -> dict[str, JsonValue] | None:
    """The `source` of a reminder's follow-up message, None for any other message."""
    source = data.get("source")
    return source if isinstance(source, dict) and source.get("kind") == "schedule" else None


def stored_occurrences(data_dir: Path, session_id: str) -> list[tuple[int, int]]:
    """`(occurrence ms, missed)` of every dispatch in the stored log of `session_id`."""
    path = data_dir / "sessions" / f"{session_id}.jsonl"
    found = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        event = json.loads(line)
        data = event["data"]
        if event["type"] == "schedule/change" and data.get("change") == "dispatch":
            found.append((_ms(data["occurrenceAt"]), data["missed"]))
    return found


async def spread_recurring(size: Size, data_dir: Path) -> dict[str, Any]:
    """N Sessions × every `recurring_every` s over `recurring_window` s (module docstring)."""
    per_session = await _resume_seconds_each(data_dir / "calibrate", 100)
    every_ms = size.recurring_every * 1000
    count = round(size.recurring_window / size.recurring_every)
    now_ms = time.time_ns() // 1_000_000
    start_ms = now_ms + 2000 + round(per_session * size.recurring * 1500)
    expected: dict[str, list[int]] = {}
    for index in range(size.recurring):
        session_id = f"recur{index:05d}"
        first = start_ms + round(index * every_ms / size.recurring)
        expected[session_id] = [first + k * every_ms for k in range(count)]
        events = [("schedule/change", every_record(first, size.recurring_every, count))]
        write_session(data_dir, session_id, events, created_at=now_ms)
    os.sync()
    probe = RecurringProbe(expected)
    patience = (start_ms - now_ms) / 1000 + size.recurring_window + size.recurring_every + 60
    async with bench_host(data_dir) as host:
        host.live.observe(probe)
        armed_s = await resume_all(host, list(expected))
        armed_ms = time.time_ns() // 1_000_000
        gc.collect()
        with anyio.move_on_after(patience):
            await probe.done.wait()
    delivered: Counter[str] = Counter()
    for session_id, occurrences in expected.items():
        stored = stored_occurrences(data_dir, session_id)
        got = Counter(occurrence for occurrence, _ in stored)
        delivered["expected"] += len(occurrences)
        delivered["exactly_once"] += sum(1 for o in occurrences if got[o] == 1)
        delivered["missing"] += sum(1 for o in occurrences if got[o] == 0)
        delivered["duplicated"] += sum(got[o] - 1 for o in occurrences if got[o] > 1)
        delivered["unexpected"] += sum(n for o, n in got.items() if o not in occurrences)
        delivered["with_missed"] += sum(1 for _, missed in stored if missed > 0)
    return {
        "sessions": size.recurring,
        "every_s": size.recurring_every,
        "window_s": size.recurring_window,
        "occurrences": dict(delivered),
        "all_exactly_once": delivered["exactly_once"] == delivered["expected"]
        and delivered["unexpected"] == 0,
        "arm_seconds": round(armed_s, 3),
        "armed_before_first_target": armed_ms < start_ms,
        "repeated_dispatches_seen": probe.repeats,
        "durable_ms": summary(probe.lateness_ms(probe.durable)),
        "followup_ms": summary(probe.lateness_ms(probe.followup)),
        "dispatch_append_ms": summary(probe.lateness_ms(probe.dispatched)),
    }
