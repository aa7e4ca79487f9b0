"""Fold cost: microseconds per `schedule/change` event, protocol v1 against v2.

The fold runs on the event loop — on every resume (the owner's first step),
for every cold history page with receipts, and in the state and wake hooks —
so its cost per event bounds how long a reminder-heavy log blocks the loop.
Each synthetic log holds `fold_events` `schedule/change` events (plus one
user message per ten of them, which a type-filtered scan skips):

- `v1`: creates and dispatches of `after` reminders (the only kind v1 has);
- `v2 once`: the same in v2 (records with a zone, revision, times);
- `v2 every`: recurring records and their dispatches (each dispatch's
  occurrence shows, by arithmetic, that the reminder still owed one);
- `v2 cron`: cron records in Europe/Berlin and dispatches of their real
  successive occurrences (each dispatch matches its occurrence's wall time
  against the cron fields; until issue 36 item 5 each walked the fields to
  the next wall time, about 40 µs a step);
- `v2 mixed`: creates, updates, dispatches and deletes of all three.

The figure is the median of 5 folds from scratch (`ScheduleFold.of`) over an
in-memory `Session`, beside `json.loads` of the same events' data (the least
any reader of the log pays per event).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from dsh.session.event import SessionEvent
from dsh.session.log import Session
from dsh_tool_schedule import ScheduleFold
from dsh_tool_schedule.cron import CronSeries
from dsh_tool_schedule.zones import load_zone

from ..sizes import Size
from ..stats import summary
from ..support import format_ms

__all__ = ["fold_cost"]

START_MS = 1_767_225_600_000
Data = dict[str, Any]


def _record(
    number: int, rule: Data, first_ms: int, *, zone: str = "UTC", revision: int = 1
) -> Data:
    stamp = format_ms(first_ms)
    return {
        "id": f"rem-{number}",
        "prompt": f"reminder {number}",
        "rule": rule,
        "timeZone": zone,
        "firstAt": stamp,
        "nextAt": stamp,
        "misfire": "latest",
        "paused": False,
        "revision": revision,
    }


def _dispatch(number: int, occurrence_ms: int, record_seq: int) -> Data:
    return {
        "version": 2,
        "change": "dispatch",
        "id": f"rem-{number}",
        "occurrenceAt": format_ms(occurrence_ms),
        "missed": 0,
        "recordSeq": record_seq,
    }


def _v1(count: int) -> list[Data]:
    out: list[Data] = []
    for number in range(1, count // 2 + 1):
        due = START_MS + number * 1000
        out.append(
            {
                "version": 1,
                "change": "create",
                "record": {
                    "id": f"rem-{number}",
                    "kind": "after",
                    "prompt": f"reminder {number}",
                    "afterSeconds": 10,
                    "scheduledAt": format_ms(due),
                },
            }
        )
        out.append({"version": 1, "change": "dispatch", "id": f"rem-{number}"})
    return out


def _recurring(count: int, rule: Data, step_ms: int, zone: str = "UTC") -> list[Data]:
    """Records of `rule`, each followed by `per` dispatches of its successive occurrences
    (a cron rule's as `CronSeries` walks them, what the owner writes; `step_ms` apart else)."""
    per = 9
    out: list[Data] = []
    number = 0
    series = CronSeries(rule["cron"], load_zone(zone)) if rule["kind"] == "cron" else None
    while len(out) < count:
        number += 1
        first = START_MS + number * 60_000
        if series is not None:
            first = series.next_after(first) or first
        out.append(
            {"version": 2, "change": "create", "record": _record(number, rule, first, zone=zone)}
        )
        occurrence = first
        for _ in range(per):
            out.append(_dispatch(number, occurrence, -1))
            following = None if series is None else series.next_after(occurrence)
            occurrence = occurrence + step_ms if following is None else following
    return out[:count]


def _once(count: int) -> list[Data]:
    out: list[Data] = []
    for number in range(1, count // 2 + 1):
        rule = {"kind": "after", "seconds": 10}
        out.append({"version": 2, "change": "create", "record": _record(number, rule, START_MS)})
        out.append(_dispatch(number, START_MS, -1))
    return out


def _mixed(count: int) -> list[Data]:
    out: list[Data] = []
    number = 0
    rules: list[tuple[Data, int, str]] = [
        ({"kind": "every", "seconds": 3600}, 3_600_000, "UTC"),
        ({"kind": "cron", "cron": "0 9 * * *"}, 86_400_000, "UTC"),
        ({"kind": "at", "at": "2026-01-02T09:00"}, 0, "Europe/Berlin"),
    ]
    while len(out) < count:
        number += 1
        rule, step, zone = rules[number % 3]
        first = START_MS + 9 * 3_600_000 if rule["kind"] == "cron" else START_MS + number * 60_000
        out.append(
            {"version": 2, "change": "create", "record": _record(number, rule, first, zone=zone)}
        )
        if step:
            out.append(_dispatch(number, first, -1))
            updated = _record(number, rule, first, zone=zone, revision=2)
            updated["prompt"] = "renamed"
            updated["nextAt"] = format_ms(first + step)
            out.append({"version": 2, "change": "update", "record": updated})
            out.append(_dispatch(number, first + step, -1))
            out.append({"version": 2, "change": "delete", "id": f"rem-{number}"})
        else:
            out.append(_dispatch(number, first, -1))
    return out[:count]


def _session(changes: list[Data]) -> Session:
    """A Session of `changes` (one user message per ten) with each dispatch's `recordSeq` set."""
    base = Session.new("fold", cwd="/", created_at=START_MS)
    events: list[SessionEvent] = []
    records: dict[str, int] = {}
    for data in changes:
        if len(events) % 11 == 10:
            events.append(
                SessionEvent(
                    seq=len(events),
                    type="message/user",
                    time=START_MS,
                    data={"text": "hi", "source": {"kind": "user"}},
                )
            )
        if data.get("change") in ("create", "update") and data["version"] == 2:
            records[data["record"]["id"]] = len(events)
        if data.get("recordSeq") == -1:
            data = {**data, "recordSeq": records[data["id"]]}
        events.append(
            SessionEvent(seq=len(events), type="schedule/change", time=START_MS, data=data)
        )
    return Session(base.header, events)


def _parse_all(lines: list[str]) -> list[Any]:
    return [json.loads(line) for line in lines]


def _time(run: Callable[[], object], rounds: int = 5) -> list[float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return samples


def fold_cost(size: Size, data_dir: Path) -> dict[str, Any]:
    """µs per `schedule/change` event for each log kind (module docstring)."""
    count = size.fold_events
    logs = {
        "v1": _v1(count),
        "v2_once": _once(count),
        "v2_every": _recurring(count, {"kind": "every", "seconds": 3600}, 3_600_000),
        "v2_cron": _recurring(
            count, {"kind": "cron", "cron": "30 8 * * MON-FRI"}, 86_400_000, "Europe/Berlin"
        ),
        "v2_mixed": _mixed(count),
    }
    result: dict[str, Any] = {"events": count}
    for name, changes in logs.items():
        session = _session(changes)
        fold = ScheduleFold.of(session)
        assert fold.error is None, (name, fold.error)
        lines = [json.dumps(data) for data in changes]
        per_event = [1e6 * s / len(changes) for s in _time(partial(ScheduleFold.of, session))]
        parse = [1e6 * s / len(lines) for s in _time(partial(_parse_all, lines))]
        result[name] = {
            "schedule_events": len(changes),
            "fold_us_per_event": summary(per_event, 2),
            "json_loads_us_per_event": summary(parse, 2),
        }
    return result
