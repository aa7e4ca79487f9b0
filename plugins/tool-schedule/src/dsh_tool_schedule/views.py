"""What the tools (and the state hook) show for a reminder: its view (public, DESIGN §8b).

::

    {"id": "rem-1", "prompt": "stretch",
     "rule": {"kind": "cron", "cron": "0 9 * * 1-5"},
     "ruleText": "at 09:00 on Monday through Friday (Europe/Berlin)",
     "timeZone": "Europe/Berlin",
     "nextAt": "2026-01-05T08:00:00.000Z", "nextAtLocal": "2026-01-05T09:00:00+01:00",
     "state": "scheduled", "revision": 1, "delivered": 0,
     "until": null, "count": null, "misfire": "latest",
     "deliveryMode": "session-local"}

`rule` echoes the arguments; `nextAt` is UTC (null when nothing is ahead,
e.g. a paused rule with no occurrence left) and `nextAtLocal` the same
instant in `timeZone`; `state` is `scheduled`, `overdue` (due now: it is
delivered as soon as the agent is idle) or `paused`; `delivered` counts the
occurrences delivered since the create. `ruleText` says when a snooze moved the next
occurrence (`snoozed_to`, `words.describe_rule`).
"""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

from .fold import Reminder
from .plan import Plan
from .timefmt import format_timestamp
from .words import describe_rule
from .zones import format_local, load_zone

__all__ = ["DELIVERY_MODE", "reminder_view", "snoozed_to"]

DELIVERY_MODE: Final = "session-local"


def reminder_view(reminder: Reminder, plan: Plan) -> dict[str, JsonValue]:
    """The view of `reminder` as `plan` (its plan at some time) describes it."""
    record = reminder.record
    next_ms = plan.next_ms
    zone = load_zone(record.time_zone)
    return {
        "id": record.id,
        "prompt": record.prompt,
        "rule": record.rule.to_data(),
        "ruleText": describe_rule(record, snoozed_ms=snoozed_to(reminder)),
        "timeZone": record.time_zone,
        "nextAt": None if next_ms is None else format_timestamp(next_ms),
        "nextAtLocal": None if next_ms is None else format_local(next_ms, zone),
        "state": plan.state,
        "revision": record.revision,
        "delivered": reminder.delivered,
        "until": record.until,
        "count": record.count,
        "misfire": record.misfire,
        "deliveryMode": DELIVERY_MODE,
    }


def snoozed_to(reminder: Reminder) -> int | None:
    """Where a snooze moved `reminder`'s next occurrence; None when it is not snoozed.

    A snooze rewrites only the record's `nextAt` (`drafts.draft_snooze`): a
    one-shot is snoozed when that differs from its `firstAt`; a recurring one
    while its owed occurrence is still that `nextAt` and the rule would not
    fall on it (once delivered, the rule goes on by itself).
    """
    record = reminder.record
    if not record.recurring:
        return record.next_ms if record.next_ms != record.first_ms else None
    if reminder.next_ms != record.next_ms:
        return None
    on_rule = reminder.series.next_after(record.next_ms - 1) == record.next_ms
    return None if on_rule else record.next_ms
