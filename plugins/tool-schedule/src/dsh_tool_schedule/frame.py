"""The reminder frame: the message one delivered occurrence queues for the model.

Exactly eleven lines, no trailing newline::

    [Scheduled reminder]
    This is a scheduled reminder that was set earlier in this conversation.
    Reminder id: "rem-1"
    Prompt: "stretch"
    Rule: "every 2 hours"
    Occurrence: 2026-03-30T09:00:00+02:00 (Europe/Berlin) = 2026-03-30T07:00:00.000Z
    Delivered at: 2026-03-30T07:00:00.004Z
    Status: on time
    Missed: 0
    Next: 2026-03-30T11:00:00+02:00 (Europe/Berlin) = 2026-03-30T09:00:00.000Z
    Delivery: it fires only while this conversation is open.

The last line says what the host does with a closed conversation: `it fires
even while this conversation is closed.` when it wakes closed Sessions
(`PluginContext.wakes_cold_sessions`), else the line above.

The id, the prompt and the rule in words are JSON string literals
(`json.dumps`, non-ASCII kept): quotes, backslashes and control characters —
line breaks included — are escaped, and so are U+0085, U+2028 and U+2029,
which some line splitters also break on. Nothing else is escaped, so people
read `<`, `>` and `&` as themselves; text inside a literal can neither end it
nor start another line, so it cannot forge a field of the frame.

`Status` is `on time` when the delivery is less than `LATE_THRESHOLD_MS`
(one second) after the occurrence, else `overdue by <duration>` — the
model's exact record; what a person is shown follows the one rule for
"overdue" instead (`alerts.OVERDUE_AFTER_MS`, a minute) (`45s`,
`3m 05s`, `2h 03m 04s`, `3d 04h 05m`). `Missed` is how many earlier
occurrences this one stands for (`Missed: 3 (not delivered when due: this
conversation was closed or its reminder turns were spent; this message
stands for them)`; counted up to `series.COUNT_CAP`, which the frame writes
`100000 or more`). `Next` is the
reminder's next occurrence, or `none (this was the last occurrence)`.
"""

from __future__ import annotations

import json

from .fold import Reminder
from .plan import Due
from .series import COUNT_CAP
from .timefmt import format_duration, format_timestamp
from .words import describe_rule
from .zones import format_local, load_zone

__all__ = ["LATE_THRESHOLD_MS", "json_literal", "reminder_frame", "reminder_status"]

LATE_THRESHOLD_MS = 1000

_ESCAPES = str.maketrans({"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def json_literal(text: str) -> str:
    """`text` as a one-line JSON string literal (see the module docstring)."""
    return json.dumps(text, ensure_ascii=False).translate(_ESCAPES)


def reminder_status(occurrence_ms: int, delivered_ms: int) -> str:
    """`on time`, or `overdue by <duration>` from one second late on."""
    late = delivered_ms - occurrence_ms
    if late < LATE_THRESHOLD_MS:
        return "on time"
    return f"overdue by {format_duration(late)}"


def _missed(missed: int) -> str:
    if missed == 0:
        return "0"
    counted = f"{missed} or more" if missed >= COUNT_CAP else str(missed)
    return (
        f"{counted} (not delivered when due: this conversation was closed or its reminder "
        "turns were spent; this message stands for them)"
    )


def reminder_frame(
    reminder: Reminder,
    due: Due,
    delivered_ms: int,
    next_ms: int | None,
    *,
    fires_when_closed: bool = False,
) -> str:
    """The frame for delivering `due` of `reminder` at `delivered_ms` (epoch ms).

    `next_ms` is what the reminder owes after this delivery (None: nothing);
    `fires_when_closed` whether the host fires reminders of closed conversations.
    Raises `ValueError` when a time has no spelling (past the year 9999).
    """
    record = reminder.record
    zone = load_zone(record.time_zone)

    def moment(epoch_ms: int) -> str:
        return f"{format_local(epoch_ms, zone)} ({record.time_zone}) = {format_timestamp(epoch_ms)}"

    following = "none (this was the last occurrence)" if next_ms is None else moment(next_ms)
    return "\n".join(
        (
            "[Scheduled reminder]",
            "This is a scheduled reminder that was set earlier in this conversation.",
            f"Reminder id: {json_literal(record.id)}",
            f"Prompt: {json_literal(record.prompt)}",
            f"Rule: {json_literal(describe_rule(record))}",
            f"Occurrence: {moment(due.occurrence_ms)}",
            f"Delivered at: {format_timestamp(delivered_ms)}",
            f"Status: {reminder_status(due.occurrence_ms, delivered_ms)}",
            f"Missed: {_missed(due.missed)}",
            f"Next: {following}",
            "Delivery: it fires even while this conversation is closed."
            if fires_when_closed
            else "Delivery: it fires only while this conversation is open.",
        )
    )
