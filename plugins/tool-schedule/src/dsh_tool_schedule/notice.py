"""`schedule/notice` (public): a rejected schedule log, told to the person in the Session.

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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field, JsonValue, ValidationError

from dsh import describe

from .fold import FoldError
from .protocol.fields import MAX_SAFE_INTEGER, RECORD_CONFIG, exact_version

if TYPE_CHECKING:
    from dsh import SessionLog

__all__ = ["NOTICE_TYPE", "Notice", "decode_notice", "notice_data", "notice_view", "noticed"]

NOTICE_TYPE = "schedule/notice"
_TYPES = frozenset({NOTICE_TYPE})


class Notice(BaseModel):
    """A stored `schedule/notice`."""

    model_config = RECORD_CONFIG

    version: Annotated[Literal[1], BeforeValidator(exact_version)]
    notice: Literal["log_invalid"]
    seq: Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
    reason: Annotated[str, Field(min_length=1)]


def decode_notice(data: JsonValue) -> Notice:
    """Decode a `schedule/notice` payload; `ValueError` naming the problem."""
    try:
        return Notice.model_validate(data, strict=True)
    except ValidationError as error:
        raise ValueError(f"invalid schedule/notice: {describe(error, root='data')}") from None


def notice_data(error: FoldError) -> dict[str, JsonValue]:
    """The notice for the rejection `error`."""
    return {"version": 1, "notice": "log_invalid", "seq": error.seq, "reason": error.reason}


def noticed(log: SessionLog, error: FoldError) -> bool:
    """True when `log` already holds a notice for the rejection at `error.seq`."""
    for event in log.scan(error.seq, types=_TYPES, reverse=True):
        try:
            if decode_notice(event.data).seq == error.seq:
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
    return {
        "notice": notice.notice,
        "seq": notice.seq,
        "reason": notice.reason,
        "deliveryMode": "session-local",
    }
