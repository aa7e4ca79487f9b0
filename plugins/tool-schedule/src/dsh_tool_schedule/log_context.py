"""What the tools read from the host's own events: the person's zone and the current turn.

- `user_zone(log)`: the `timeZone` of the latest `message/user` that has one
  (the browser sends it with every message; a reminder's follow-up has none),
  read through `dsh.decode_host_event`, backwards and type-filtered; `UTC`
  when no message names a zone this machine knows.
- `creates_this_turn(log)`: how many reminders were created since the latest
  `message/user` — a turn is the run from a `message/user` to its `turn/end`,
  and a create can only come from a tool call inside one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh import USER_MESSAGE, PayloadError, UserMessage, decode_host_event, validate_time_zone

from .protocol import EVENT_TYPE
from .zones import UTC_ZONE

if TYPE_CHECKING:
    from dsh import SessionLog

__all__ = ["creates_this_turn", "user_zone"]

_USER = frozenset({USER_MESSAGE})
_CHANGES = frozenset({EVENT_TYPE})


def user_zone(log: SessionLog) -> str:
    """The zone the person last wrote from, else `UTC` (module docstring)."""
    for event in log.scan(types=_USER, reverse=True):
        try:
            message = decode_host_event(event)
        except PayloadError:
            continue
        if isinstance(message, UserMessage) and message.time_zone is not None:
            try:
                return validate_time_zone(message.time_zone)
            except ValueError:
                continue
    return UTC_ZONE


def creates_this_turn(log: SessionLog) -> int:
    """The `schedule/change` creates after the latest `message/user`."""
    latest = next(log.scan(types=_USER, reverse=True), None)
    start = max(log.fold_start, 0 if latest is None else latest.seq + 1)
    return sum(
        1
        for event in log.scan(start, types=_CHANGES)
        if isinstance(event.data, dict) and event.data.get("change") == "create"
    )
