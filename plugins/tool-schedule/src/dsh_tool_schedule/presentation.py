"""The reminder receipt: what a durable `dispatch` looks like to a reader.

`schedule_reminder_presentation(log, dispatch_seq)` returns, for a dispatch the
fold accepts::

    {"scheduleId": "rem-1", "prompt": "stretch",
     "occurrenceAt": "2026-03-30T07:00:00.000Z", "deliveredAt": "2026-03-30T07:00:00.004Z",
     "missed": 0, "rule": {"kind": "every", "seconds": 7200},
     "ruleText": "every 2 hours", "timeZone": "Europe/Berlin", "revision": 1,
     "deliveryMode": "session-local"}

and None for any other event. `deliveredAt` is the dispatch event's own time;
`snoozedAs` (only when there is one) is the reminder a person made of this
occurrence with "Snooze" (`snoozes`: one type-filtered scan after it);
a v1 dispatch reads as once, `after`, in UTC, with its record's `scheduledAt`
as the occurrence.

Which record: a v2 dispatch names it (`recordSeq`: one `log.event` read); a
v1 dispatch pairs with the nearest preceding v1 create of its id, found by a
backward type-filtered scan — a dispatch at or after the Session's
`seedLength` only within `[seedLength, dispatch)`, so a child never borrows
its parent's record; an inherited one anywhere before it (ids restart in
each fork generation and `session/end-seed` also marks resumes).

Which dispatches: a Session's own dispatch (at or after `fold_start`) only
when the fold of `[fold_start, dispatch]` accepts it — a dispatch after a
delete, or after any event the fold rejects, gets no receipt. Pass `fold`
(a `ScheduleFold` of the same log that has read past the dispatch) to reuse
it; without one the fold is computed. An inherited dispatch was accepted by
the parent that wrote it; it only has to pair with its record.

The log is read through `SessionLog` only (`event`, `scan`), so a cold
Session backed by ranged reads works as well as a live one.

Pairing costs a v2 receipt one more `event` read and a v1 one a backward scan
over `schedule/change` events from the dispatch to its create; the acceptance
fold is one type-filtered scan of the `schedule/change` events, shared by
every receipt of one log object (`fold`). A cold Session's stored log (read
ranged and type-filtered) is never read whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import JsonValue

from .fold import ScheduleFold, record_of_v1
from .protocol import (
    EVENT_TYPE,
    Change,
    ProtocolError,
    Record,
    V1Create,
    V1Dispatch,
    V1Record,
    V2Create,
    V2Dispatch,
    V2Update,
    decode_change,
)
from .snoozes import snoozed_as
from .timefmt import format_timestamp
from .views import DELIVERY_MODE
from .words import describe_rule

if TYPE_CHECKING:
    from dsh import SessionEvent, SessionLog

__all__ = ["schedule_reminder_presentation"]

_TYPES = frozenset({EVENT_TYPE})


def schedule_reminder_presentation(
    log: SessionLog, dispatch_seq: int, *, fold: ScheduleFold | None = None
) -> dict[str, JsonValue] | None:
    """The receipt for the dispatch at `dispatch_seq`, or None (see the module docstring)."""
    if not 0 <= dispatch_seq < len(log):
        return None
    event = log.event(dispatch_seq)
    dispatch = _decode(event)
    if not isinstance(dispatch, V1Dispatch | V2Dispatch):
        return None
    own = dispatch_seq >= log.fold_start
    if own and not _accepted(log, dispatch_seq, fold):
        return None
    if isinstance(dispatch, V2Dispatch):
        record = _named_record(log, dispatch, own=own)
        if record is None:
            return None
        receipt = _receipt(record, dispatch.occurrence_at, dispatch.missed, event.time)
    else:
        v1 = _v1_record(log, dispatch, dispatch_seq, own=own)
        if v1 is None:
            return None
        receipt = _receipt(record_of_v1(v1), v1.scheduled_at, 0, event.time)
    snoozed = snoozed_as(log, dispatch_seq)
    if snoozed is not None:
        receipt["snoozedAs"] = snoozed
    return receipt


def _accepted(log: SessionLog, seq: int, fold: ScheduleFold | None) -> bool:
    if fold is None or fold.position <= seq:
        fold = ScheduleFold.of(log, seq + 1)
    return fold.error is None or fold.error.seq > seq


def _named_record(log: SessionLog, dispatch: V2Dispatch, *, own: bool) -> Record | None:
    seq = dispatch.record_seq
    if seq >= len(log) or (own and seq < log.fold_start):
        return None
    change = _decode(log.event(seq))
    if isinstance(change, V2Create | V2Update) and change.record.id == dispatch.id:
        return change.record
    if isinstance(change, V1Create) and change.record.id == dispatch.id:
        return record_of_v1(change.record)
    return None


def _v1_record(
    log: SessionLog, dispatch: V1Dispatch, dispatch_seq: int, *, own: bool
) -> V1Record | None:
    floor = log.fold_start if own else 0
    for event in log.scan(floor, dispatch_seq, types=_TYPES, reverse=True):
        change = _decode(event)
        if isinstance(change, V1Create) and change.record.id == dispatch.id:
            return change.record
    return None


def _receipt(
    record: Record, occurrence_at: str, missed: int, delivered_ms: int
) -> dict[str, JsonValue]:
    return {
        "scheduleId": record.id,
        "prompt": record.prompt,
        "occurrenceAt": occurrence_at,
        "deliveredAt": _instant(delivered_ms),
        "missed": missed,
        "rule": record.rule.to_data(),
        "ruleText": describe_rule(record),
        "timeZone": record.time_zone,
        "revision": record.revision,
        "deliveryMode": DELIVERY_MODE,
    }


def _instant(epoch_ms: int) -> str | None:
    try:
        return format_timestamp(epoch_ms)
    except ValueError:  # an event time no timestamp can spell: show none rather than fail
        return None


def _decode(event: SessionEvent) -> Change | None:
    if event.type != EVENT_TYPE:
        return None
    try:
        return decode_change(event.data)
    except ProtocolError:
        return None
