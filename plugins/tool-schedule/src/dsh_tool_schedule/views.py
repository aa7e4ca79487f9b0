"""What the tools return for a reminder: the record, its state and its delivery mode."""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

from .fold import ActiveReminder

__all__ = ["DELIVERY_MODE", "reminder_view"]

DELIVERY_MODE: Final = "session-local"


def reminder_view(reminder: ActiveReminder, now_ms: int) -> dict[str, JsonValue]:
    """`{id, kind, prompt, afterSeconds, scheduledAt, state, deliveryMode}`.

    `state` is `"scheduled"` while `now_ms` is before the target and
    `"overdue"` from the target on; `deliveryMode` is always `"session-local"`.
    """
    view = reminder.record.to_data()
    view["state"] = "scheduled" if now_ms < reminder.due_ms else "overdue"
    view["deliveryMode"] = DELIVERY_MODE
    return view
