"""Building schedule logs for tests: event payloads (v1 and v2) and Sessions made from them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import JsonValue

from dsh.session.event import SessionEvent
from dsh.session.log import Session
from dsh_tool_schedule.protocol import EVENT_TYPE
from dsh_tool_schedule.timefmt import format_timestamp

from .conftest import START_MS

Entry = tuple[str, JsonValue]


# -- protocol v1 (read forever, never written) -----------------------------------


def create(
    reminder_id: str, after: int = 10, *, prompt: str = "stretch", created_ms: int = START_MS
) -> Entry:
    return (
        EVENT_TYPE,
        {
            "version": 1,
            "change": "create",
            "record": {
                "id": reminder_id,
                "kind": "after",
                "prompt": prompt,
                "afterSeconds": after,
                "scheduledAt": format_timestamp(created_ms + after * 1000),
            },
        },
    )


def delete(reminder_id: str) -> Entry:
    return (EVENT_TYPE, {"version": 1, "change": "delete", "id": reminder_id})


def dispatch(reminder_id: str) -> Entry:
    return (EVENT_TYPE, {"version": 1, "change": "dispatch", "id": reminder_id})


# -- protocol v2 -------------------------------------------------------------------


def record(
    reminder_id: str = "rem-1",
    *,
    prompt: str = "stretch",
    rule: dict[str, Any] | None = None,
    zone: str = "UTC",
    first_ms: int = START_MS + 10_000,
    next_ms: int | None = None,
    until_ms: int | None = None,
    count: int | None = None,
    misfire: str = "latest",
    paused: bool = False,
    revision: int = 1,
) -> dict[str, Any]:
    """A v2 record; by default once, 10 s after START_MS, in UTC."""
    data: dict[str, Any] = {
        "id": reminder_id,
        "prompt": prompt,
        "rule": rule or {"kind": "after", "seconds": 10},
        "timeZone": zone,
        "firstAt": format_timestamp(first_ms),
        "nextAt": format_timestamp(first_ms if next_ms is None else next_ms),
    }
    if until_ms is not None:
        data["until"] = format_timestamp(until_ms)
    if count is not None:
        data["count"] = count
    data.update({"misfire": misfire, "paused": paused, "revision": revision})
    return data


def every(seconds: int, **fields: Any) -> dict[str, Any]:
    """A v2 `every` record (first occurrence `first_ms`, default one interval after START_MS)."""
    fields.setdefault("first_ms", START_MS + seconds * 1000)
    return record(rule={"kind": "every", "seconds": seconds}, **fields)


def cron(expression: str, first_ms: int, **fields: Any) -> dict[str, Any]:
    return record(rule={"kind": "cron", "cron": expression}, first_ms=first_ms, **fields)


def create2(data: dict[str, Any]) -> Entry:
    return (EVENT_TYPE, {"version": 2, "change": "create", "record": data})


def update2(data: dict[str, Any]) -> Entry:
    return (EVENT_TYPE, {"version": 2, "change": "update", "record": data})


def delete2(reminder_id: str) -> Entry:
    return (EVENT_TYPE, {"version": 2, "change": "delete", "id": reminder_id})


def dispatch2(reminder_id: str, occurrence_ms: int, record_seq: int, missed: int = 0) -> Entry:
    return (
        EVENT_TYPE,
        {
            "version": 2,
            "change": "dispatch",
            "id": reminder_id,
            "occurrenceAt": format_timestamp(occurrence_ms),
            "missed": missed,
            "recordSeq": record_seq,
        },
    )


# -- other events and logs ---------------------------------------------------------


def user(text: str = "hi", *, zone: str | None = None, kind: str = "user") -> Entry:
    data: dict[str, Any] = {"text": text, "source": {"kind": kind}}
    if zone is not None:
        data["timeZone"] = zone
    return ("message/user", data)


def followup(*dispatch_seqs: int, reminder_id: str = "rem-1") -> Entry:
    """The stored follow-up of the dispatch(es) at `dispatch_seqs` (several: a coalesced one)."""
    source: dict[str, Any] = {"kind": "schedule", "scheduleId": reminder_id}
    source["dispatchSeq"] = dispatch_seqs[0]
    if len(dispatch_seqs) > 1:
        source["dispatchSeqs"] = list(dispatch_seqs)
    return ("message/user", {"text": "[Scheduled reminder]", "source": source})


def raw(data: JsonValue) -> Entry:
    return (EVENT_TYPE, data)


def events(
    entries: Iterable[Entry], *, first_seq: int = 0, time: int = START_MS
) -> list[SessionEvent]:
    return [
        SessionEvent(seq=first_seq + index, type=type, time=time, data=data)
        for index, (type, data) in enumerate(entries)
    ]


def session(*entries: Entry, session_id: str = "log", time: int = START_MS) -> Session:
    """A Session (not live in any store) holding exactly `entries`."""
    base = Session.new(session_id, cwd="/work", created_at=START_MS)
    return Session(base.header, events(entries, time=time))


def extend(base: Session, *entries: Entry, time: int = START_MS) -> Session:
    """A new Session object with `base`'s header and events plus `entries`."""
    return Session(base.header, [*base.events, *events(entries, first_seq=len(base), time=time)])


def fork(parent: Session, child_id: str, at: int | None = None) -> Session:
    at = len(parent) if at is None else at
    return Session.fork(parent.header, parent.events, child_id, at=at, created_at=START_MS)


def resume(stored: Session, *, at_ms: int) -> Session:
    return Session.resume(stored.header, stored.events, resumed_at=at_ms)


def payloads(seq_events: Sequence[SessionEvent]) -> list[JsonValue]:
    return [event.data for event in seq_events]
