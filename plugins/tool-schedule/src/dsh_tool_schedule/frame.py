"""The fixed reminder frame: the message a due reminder queues for the model.

Exactly eight lines, no trailing newline::

    [Scheduled reminder]
    This is a scheduled reminder that was set earlier in this Session.
    Reminder id: "rem-1"
    Prompt: "stretch"
    Due at: 2026-01-01T00:00:10.000Z
    Delivered at: 2026-01-01T00:00:10.004Z
    Status: on time
    Delivery: session-local (it fires only while this Session is live).

The id and the prompt are JSON string literals (`json.dumps`, non-ASCII kept)
with `<`, `>` and `&` also escaped as `\\u003c`, `\\u003e`, `\\u0026`, so
`</script>` never appears literally, and with U+0085, U+2028 and U+2029
escaped, so no line splitter can break the frame into more lines. Every
literal still decodes with `json.loads` to the exact stored text.

`Status` is `on time` when the delivery is less than `LATE_THRESHOLD_MS`
(one second) after the target, else `overdue by <duration>` (see
`timefmt.format_duration`: `45s`, `3m 05s`, `2h 03m 04s`, `3d 04h 05m`).
"""

from __future__ import annotations

import json

from .fold import ActiveReminder
from .timefmt import format_duration, format_timestamp

__all__ = ["LATE_THRESHOLD_MS", "json_literal", "reminder_frame"]

LATE_THRESHOLD_MS = 1000

_ESCAPES = str.maketrans(
    {
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
        "\u0085": "\\u0085",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)


def json_literal(text: str) -> str:
    """`text` as a JSON string literal that is safe inside HTML and on one line."""
    return json.dumps(text, ensure_ascii=False).translate(_ESCAPES)


def reminder_status(due_ms: int, delivered_ms: int) -> str:
    """`on time`, or `overdue by <duration>` from one second late on."""
    late = delivered_ms - due_ms
    if late < LATE_THRESHOLD_MS:
        return "on time"
    return f"overdue by {format_duration(late)}"


def reminder_frame(reminder: ActiveReminder, delivered_ms: int) -> str:
    """The frame for `reminder` delivered at `delivered_ms` (epoch ms)."""
    return "\n".join(
        (
            "[Scheduled reminder]",
            "This is a scheduled reminder that was set earlier in this Session.",
            f"Reminder id: {json_literal(reminder.id)}",
            f"Prompt: {json_literal(reminder.record.prompt)}",
            f"Due at: {reminder.record.scheduled_at}",
            f"Delivered at: {format_timestamp(delivered_ms)}",
            f"Status: {reminder_status(reminder.due_ms, delivered_ms)}",
            "Delivery: session-local (it fires only while this Session is live).",
        )
    )
