"""`schedule/snooze` (public): a delivered reminder, snoozed into a new one-shot reminder.

Snoozing a reminder that already fired (its card's "Snooze 10 min") creates
a new one-shot reminder with the same prompt and zone — a plain v2
`create` the fold knows — and, in the same flush, links it to the
occurrence it came from::

    {"version": 1, "id": "rem-5", "dispatchSeq": 12}

`id` is the new reminder, `dispatchSeq` the seq of the `dispatch` that
delivered the snoozed occurrence. The fold never reads this event (like
`schedule/notice`), so a log with links reads the same to a host that
does not know them; the link is what lets a second snooze of the same
occurrence (another tab, a retry) answer with the reminder the first one
made instead of making another, and what the cards show ("snoozed").

`snooze_view` is the sidecar the browser draws for a link; `snoozed_as`
finds the link of a dispatch (one type-filtered scan from the dispatch on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field, JsonValue, ValidationError

from .protocol import (
    EVENT_TYPE,
    Change,
    ProtocolError,
    Record,
    V1Dispatch,
    V2Create,
    V2Dispatch,
    decode_change,
)
from .protocol.fields import MAX_SAFE_INTEGER, RECORD_CONFIG, Id, exact_version
from .zones import format_local, load_zone

if TYPE_CHECKING:
    from dsh import SessionLog

__all__ = ["SNOOZE_TYPE", "Snooze", "decode_snooze", "snooze_data", "snooze_view", "snoozed_as"]

SNOOZE_TYPE = "schedule/snooze"
_TYPES = frozenset({SNOOZE_TYPE})
_CHANGES = frozenset({EVENT_TYPE})


class Snooze(BaseModel):
    """A stored `schedule/snooze`."""

    model_config = RECORD_CONFIG

    version: Annotated[Literal[1], BeforeValidator(exact_version)]
    id: Id
    dispatch_seq: Annotated[int, Field(alias="dispatchSeq", ge=0, le=MAX_SAFE_INTEGER)]


def decode_snooze(data: JsonValue) -> Snooze | None:
    """The link a payload holds, or None for anything that is not one."""
    try:
        return Snooze.model_validate(data, strict=True)
    except ValidationError:
        return None


def snooze_data(reminder_id: str, dispatch_seq: int) -> dict[str, JsonValue]:
    """The payload linking reminder `reminder_id` to the dispatch at `dispatch_seq`."""
    return {"version": 1, "id": reminder_id, "dispatchSeq": dispatch_seq}


def snoozed_as(log: SessionLog, dispatch_seq: int) -> str | None:
    """The id of the reminder the first snooze of that dispatch made, or None."""
    for event in log.scan(dispatch_seq + 1, types=_TYPES):
        link = decode_snooze(event.data)
        if link is not None and link.dispatch_seq == dispatch_seq:
            return link.id
    return None


def snooze_view(log: SessionLog, seq: int) -> dict[str, JsonValue] | None:
    """What the browser draws for the link at `seq`: the new reminder's prompt and time,
    and the reminder it came from; None for a malformed link.

    The new reminder is read from its `create` (the nearest before the link:
    one backward type-filtered scan), the snoozed one from its dispatch (one
    `event` read). A link the host wrote always has both; one that has not
    shows what there is.
    """
    link = decode_snooze(log.event(seq).data)
    if link is None:
        return None
    view: dict[str, JsonValue] = {
        "id": link.id,
        "dispatchSeq": link.dispatch_seq,
        "fromId": _dispatched_id(log, link.dispatch_seq),
    }
    record = _created(log, link.id, seq)
    if record is not None:
        view |= {
            "prompt": record.prompt,
            "nextAt": record.next_at,
            "nextAtLocal": format_local(record.next_ms, load_zone(record.time_zone)),
            "timeZone": record.time_zone,
        }
    return {"snooze": view}


def _created(log: SessionLog, reminder_id: str, before: int) -> Record | None:
    for event in log.scan(log.fold_start, before, types=_CHANGES, reverse=True):
        change = _change(event.data)
        if isinstance(change, V2Create) and change.record.id == reminder_id:
            return change.record
    return None


def _dispatched_id(log: SessionLog, seq: int) -> str | None:
    if not 0 <= seq < len(log):
        return None
    event = log.event(seq)
    change = _change(event.data) if event.type == EVENT_TYPE else None
    return change.id if isinstance(change, V1Dispatch | V2Dispatch) else None


def _change(data: JsonValue) -> Change | None:
    try:
        return decode_change(data)
    except ProtocolError:
        return None
