from __future__ import annotations

from dsh_tool_schedule.fold import ScheduleFold
from dsh_tool_schedule.plan import Plan, plan
from dsh_tool_schedule.timefmt import parse_timestamp
from dsh_tool_schedule.views import reminder_view

from .conftest import START_MS
from .logs import create, create2, cron, session


def test_a_view_names_the_rule_the_zone_and_the_next_time_in_utc_and_locally() -> None:
    first = parse_timestamp("2026-01-05T08:00:00.000Z")
    reminder = ScheduleFold.of(
        session(create2(cron("0 9 * * MON-FRI", first, zone="Europe/Berlin", count=5)))
    ).reminders()[0]
    assert reminder_view(reminder, plan(reminder, START_MS, grace_ms=0)) == {
        "id": "rem-1",
        "prompt": "stretch",
        "rule": {"kind": "cron", "cron": "0 9 * * MON-FRI"},
        "ruleText": "at 09:00 on Monday through Friday (Europe/Berlin), 5 times in all",
        "timeZone": "Europe/Berlin",
        "nextAt": "2026-01-05T08:00:00.000Z",
        "nextAtLocal": "2026-01-05T09:00:00+01:00",
        "state": "scheduled",
        "revision": 1,
        "delivered": 0,
        "until": None,
        "count": 5,
        "misfire": "latest",
        "deliveryMode": "session-local",
    }


def test_a_v1_reminder_is_shown_as_an_after_rule_in_utc() -> None:
    reminder = ScheduleFold.of(session(create("rem-1", 10))).reminders()[0]
    view = reminder_view(reminder, plan(reminder, START_MS + 10_000, grace_ms=0))
    assert view["rule"] == {"kind": "after", "seconds": 10}
    assert (view["timeZone"], view["state"], view["nextAt"]) == (
        "UTC",
        "overdue",
        "2026-01-01T00:00:10.000Z",
    )


def test_nothing_ahead_is_null() -> None:
    reminder = ScheduleFold.of(session(create("rem-1", 10))).reminders()[0]
    view = reminder_view(reminder, Plan("paused", None))
    assert (view["nextAt"], view["nextAtLocal"], view["state"]) == (None, None, "paused")
