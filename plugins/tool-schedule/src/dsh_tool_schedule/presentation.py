"""The reminder receipt: what a durable `dispatch` event looks like to a reader.

`schedule_reminder_presentation(session, dispatch_seq)` pairs the dispatch at
`dispatch_seq` with the `create` that set it and returns::

    {"scheduleId", "prompt", "occurrenceAt", "deliveryMode": "session-local"}

(`occurrenceAt` is the record's `scheduledAt`), or None when that event is not
a valid dispatch or has no partner.

Pairing respects ownership: a dispatch at or after the Session's `seedLength`
pairs only with a create in `[seedLength, dispatch)`, so a child never borrows
its parent's record; an inherited dispatch (before `seedLength`) pairs with the
nearest preceding create of the same id anywhere before it, because
`session/end-seed` also marks resumes and ids restart in each fork generation.

The log is read through `dsh.SessionLog` only: the dispatch itself
(`event`), then a backward `scan` over `schedule/change` events from the
dispatch to the floor, stopping at the first matching create. So a cold
Session's stored log (read ranged and type-filtered) costs only what lies
between a dispatch and its create, never the whole log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import JsonValue

from .protocol import (
    EVENT_TYPE,
    CreateChange,
    DeleteChange,
    DispatchChange,
    ProtocolError,
    decode_change,
)
from .views import DELIVERY_MODE

if TYPE_CHECKING:
    from dsh import SessionEvent, SessionLog

__all__ = ["schedule_reminder_presentation"]


def schedule_reminder_presentation(
    session: SessionLog, dispatch_seq: int
) -> dict[str, JsonValue] | None:
    """The receipt for the dispatch at `dispatch_seq`, or None (see the module docstring)."""
    if not 0 <= dispatch_seq < len(session):
        return None
    dispatch = _decode(session.event(dispatch_seq))
    if not isinstance(dispatch, DispatchChange):
        return None
    seed = session.header.seed_length or 0
    floor = seed if dispatch_seq >= seed else 0
    for event in session.scan(floor, dispatch_seq, types={EVENT_TYPE}, reverse=True):
        change = _decode(event)
        if isinstance(change, CreateChange) and change.record.id == dispatch.id:
            return {
                "scheduleId": change.record.id,
                "prompt": change.record.prompt,
                "occurrenceAt": change.record.scheduled_at,
                "deliveryMode": DELIVERY_MODE,
            }
    return None


def _decode(event: SessionEvent) -> CreateChange | DispatchChange | None:
    if event.type != EVENT_TYPE:
        return None
    try:
        change = decode_change(event.data)
    except ProtocolError:
        return None
    return None if isinstance(change, DeleteChange) else change
