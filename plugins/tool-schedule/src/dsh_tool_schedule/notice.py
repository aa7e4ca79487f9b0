"""`schedule/notice` (public): what stops reminders, told to the person in the Session.

When the fold rejects a Session's schedule log, no reminder of that Session
is delivered any more (the log is append-only, so the rejection is final).
That must not be a secret kept in a server log: the live owner appends, once
per rejection, ::

    {"version": 1, "notice": "log_invalid", "seq": 12, "reason": "dispatch of rem-2, which is ..."}

naming the rejected event's `seq` and the fold's reason. "Once" is per
rejected seq: before appending, the owner looks for a notice with the same
`seq` (a backward type-filtered scan), so restarts do not repeat it. The
event's view (`notice_view`) is drawn by the browser as a warning card; the
same error is part of the plugin state (`state.session_state`). A notice is
not a `schedule/change`: the fold never reads it.

Second kind (third edition): when the Session's delivery budget is spent
(`budget.SessionBudget`), the owner appends, once per stop, ::

    {"version": 1, "notice": "deliveries_deferred", "limit": "hour", "max": 60,
     "until": "2026-01-01T01:00:00.000Z", "reason": "60 reminder turns in the last hour, ..."}

`limit` is the window that is full (`hour` or `day`), `max` its size,
`until` when the first deferred reminder may be delivered. At most one an
hour: not again while the log holds a deferral notice appended less than an
hour before (`deferral_told`, a backward scan of the notices that stops at
the first older than that), so restarts, recomputes and the short bursts a
refilling window allows do not repeat it. The reminders stay active and
due; nothing is lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field, JsonValue, TypeAdapter, ValidationError

from dsh import describe

from .fold import FoldError
from .protocol.fields import MAX_SAFE_INTEGER, RECORD_CONFIG, Timestamp, exact_version
from .timefmt import format_timestamp

if TYPE_CHECKING:
    from dsh import SessionLog

__all__ = [
    "NOTICE_TYPE",
    "DeferredNotice",
    "Notice",
    "decode_notice",
    "deferral_told",
    "deferred_data",
    "notice_data",
    "notice_view",
    "noticed",
]

NOTICE_TYPE = "schedule/notice"
_TYPES = frozenset({NOTICE_TYPE})
_TOLD_WITHIN_MS = 3_600_000


class Notice(BaseModel):
    """A stored `schedule/notice`."""

    model_config = RECORD_CONFIG

    version: Annotated[Literal[1], BeforeValidator(exact_version)]
    notice: Literal["log_invalid"]
    seq: Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
    reason: Annotated[str, Field(min_length=1)]


class DeferredNotice(BaseModel):
    """A stored `schedule/notice` of deliveries deferred by the Session's budget."""

    model_config = RECORD_CONFIG

    version: Annotated[Literal[1], BeforeValidator(exact_version)]
    notice: Literal["deliveries_deferred"]
    limit: Literal["hour", "day"]
    max: Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER)]
    until: Timestamp
    reason: Annotated[str, Field(min_length=1)]


_NOTICES: TypeAdapter[Notice | DeferredNotice] = TypeAdapter(
    Annotated[Notice | DeferredNotice, Field(discriminator="notice")]
)


def decode_notice(data: JsonValue) -> Notice | DeferredNotice:
    """Decode a `schedule/notice` payload; `ValueError` naming the problem."""
    try:
        return _NOTICES.validate_python(data, strict=True)
    except ValidationError as error:
        raise ValueError(f"invalid schedule/notice: {describe(error, root='data')}") from None


def notice_data(error: FoldError) -> dict[str, JsonValue]:
    """The notice for the rejection `error`."""
    return {"version": 1, "notice": "log_invalid", "seq": error.seq, "reason": error.reason}


def deferred_data(limit: str, size: int, until_ms: int) -> dict[str, JsonValue]:
    """The notice that the Session's `limit` window (`hour`/`day`) of `size` turns is full."""
    until = format_timestamp(until_ms)
    window = "hour" if limit == "hour" else "day"
    return {
        "version": 1,
        "notice": "deliveries_deferred",
        "limit": window,
        "max": size,
        "until": until,
        "reason": f"{size} reminder turns in the last {window}, the most this conversation "
        f"may start; reminders that fall due wait and are delivered from {until} on, none lost",
    }


def noticed(log: SessionLog, error: FoldError) -> bool:
    """True when `log` already holds a notice for the rejection at `error.seq`."""
    for event in log.scan(error.seq, types=_TYPES, reverse=True):
        try:
            notice = decode_notice(event.data)
        except ValueError:
            continue
        if isinstance(notice, Notice) and notice.seq == error.seq:
            return True
    return False


def deferral_told(log: SessionLog, now_ms: int) -> bool:
    """True when the log holds a deferral notice appended within the hour before `now_ms`."""
    for event in log.scan(log.fold_start, types=_TYPES, reverse=True):
        if event.time <= now_ms - _TOLD_WITHIN_MS:
            return False
        try:
            if isinstance(decode_notice(event.data), DeferredNotice):
                return True
        except ValueError:
            continue
    return False


def notice_view(data: JsonValue) -> dict[str, JsonValue] | None:
    """The view the browser draws for a notice, or None for a malformed one."""
    try:
        notice = decode_notice(data)
    except ValueError:
        return None
    if isinstance(notice, DeferredNotice):
        return {
            "notice": notice.notice,
            "limit": notice.limit,
            "max": notice.max,
            "until": notice.until,
            "reason": notice.reason,
            "deliveryMode": "session-local",
        }
    return {
        "notice": notice.notice,
        "seq": notice.seq,
        "reason": notice.reason,
        "deliveryMode": "session-local",
    }
