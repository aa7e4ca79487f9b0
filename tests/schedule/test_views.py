from __future__ import annotations

from dsh_tool_schedule.fold import ScheduleFold
from dsh_tool_schedule.views import reminder_view

from .conftest import START_MS
from .logs import create, session


def test_a_view_is_the_record_plus_state_and_delivery_mode() -> None:
    reminder = ScheduleFold.of(session(create("rem-1", 10))).reminders()[0]
    assert reminder_view(reminder, START_MS) == {
        "id": "rem-1",
        "kind": "after",
        "prompt": "stretch",
        "afterSeconds": 10,
        "scheduledAt": "2026-01-01T00:00:10.000Z",
        "state": "scheduled",
        "deliveryMode": "session-local",
    }


def test_the_state_turns_overdue_exactly_at_the_target() -> None:
    reminder = ScheduleFold.of(session(create("rem-1", 10))).reminders()[0]
    assert reminder_view(reminder, START_MS + 9_999)["state"] == "scheduled"
    assert reminder_view(reminder, START_MS + 10_000)["state"] == "overdue"
    assert reminder_view(reminder, START_MS + 99_000_000)["state"] == "overdue"
