"""Building schedule logs for tests: event payloads and Sessions made from them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import JsonValue

from dsh.session import Session, SessionEvent
from dsh_tool_schedule.protocol import EVENT_TYPE
from dsh_tool_schedule.timefmt import format_timestamp

from .conftest import START_MS

Entry = tuple[str, JsonValue]


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


def user(text: str = "hi") -> Entry:
    return ("message/user", {"text": text, "source": {"kind": "user"}})


def raw(data: JsonValue) -> Entry:
    return (EVENT_TYPE, data)


def events(entries: Iterable[Entry], *, first_seq: int = 0) -> list[SessionEvent]:
    return [
        SessionEvent(seq=first_seq + index, type=type, time=START_MS, data=data)
        for index, (type, data) in enumerate(entries)
    ]


def session(*entries: Entry, session_id: str = "log") -> Session:
    """A Session (not live in any store) holding exactly `entries`."""
    base = Session.new(session_id, cwd="/work", created_at=START_MS)
    return Session(base.header, events(entries))


def extend(base: Session, *entries: Entry) -> Session:
    """A new Session object with `base`'s header and events plus `entries`."""
    return Session(base.header, [*base.events, *events(entries, first_seq=len(base))])


def fork(parent: Session, child_id: str, at: int | None = None) -> Session:
    at = len(parent) if at is None else at
    return Session.fork(parent.header, parent.events, child_id, at=at, created_at=START_MS)


def resume(stored: Session, *, at_ms: int) -> Session:
    return Session.resume(stored.header, stored.events, resumed_at=at_ms)


def payloads(seq_events: Sequence[SessionEvent]) -> list[JsonValue]:
    return [event.data for event in seq_events]
