from __future__ import annotations

from typing import Any

from dsh_tool_schedule.fold import Reminder, ScheduleFold
from dsh_tool_schedule.plan import Due, Plan, plan, with_missed
from dsh_tool_schedule.series import COUNT_CAP

from .conftest import START_MS
from .logs import Entry, create2, dispatch2, every, record, session

MINUTE = 60_000
GRACE = 5 * MINUTE


def reminder(*entries: Entry) -> Reminder:
    found = ScheduleFold.of(session(*entries)).get("rem-1")
    assert found is not None
    return found


def recurring(**fields: Any) -> Reminder:
    return reminder(create2(every(60, first_ms=START_MS + MINUTE, **fields)))


def at(item: Reminder, now: int, **options: Any) -> Plan:
    return plan(item, now, grace_ms=GRACE, **options)


def test_an_occurrence_ahead_is_scheduled_and_the_owner_wakes_for_it() -> None:
    once = reminder(create2(record()))
    assert at(once, START_MS) == Plan("scheduled", START_MS + 10_000)
    assert at(once, START_MS).wake_ms == START_MS + 10_000


def test_a_one_shot_is_due_once_however_late() -> None:
    once = reminder(create2(record()))
    late = START_MS + 10 * 86_400_000
    assert at(once, late) == Plan("overdue", START_MS + 10_000, Due(START_MS + 10_000, 0))
    assert at(once, late).wake_ms is None


def test_latest_delivers_the_most_recent_occurrence_and_counts_the_rest() -> None:
    item = recurring()
    now = START_MS + 10 * MINUTE + 30_000  # occurrences at 1..10 minutes have passed
    assert at(item, now) == Plan("overdue", START_MS + 10 * MINUTE, Due(START_MS + 10 * MINUTE, 9))
    assert at(item, now, count_missed=False).due == Due(START_MS + 10 * MINUTE, 0)
    assert at(item, START_MS + MINUTE).due == Due(START_MS + MINUTE, 0)


def test_missed_stops_at_the_cap_which_means_that_many_or_more() -> None:
    item = recurring()
    # The owed occurrence and COUNT_CAP - 1 more before the latest: exactly the cap.
    exact = START_MS + (COUNT_CAP + 1) * MINUTE
    assert at(item, exact).due == Due(exact, COUNT_CAP)
    assert at(item, exact - MINUTE).due == Due(exact - MINUTE, COUNT_CAP - 1)
    # Any number beyond it is written as the cap itself, never COUNT_CAP + 1.
    beyond = START_MS + 80 * 1440 * MINUTE
    assert at(item, beyond).due == Due(beyond, COUNT_CAP)


def test_with_missed_counts_what_plan_counts_for_the_due_it_planned() -> None:
    now = START_MS + 10 * MINUTE + 30_000
    for item in (recurring(), recurring(misfire="skip"), reminder(create2(record()))):
        uncounted = at(item, START_MS + 10 * MINUTE, count_missed=False).due
        assert uncounted is not None
        assert with_missed(item, uncounted) == at(item, START_MS + 10 * MINUTE).due
    stale = at(recurring(), now, count_missed=False).due
    assert stale is not None and stale.missed == 0
    assert with_missed(recurring(), stale) == Due(START_MS + 10 * MINUTE, 9)


def test_the_catch_up_stops_at_until() -> None:
    item = recurring(until_ms=START_MS + 3 * MINUTE)
    assert at(item, START_MS + 60 * MINUTE).due == Due(START_MS + 3 * MINUTE, 2)


def test_a_snoozed_occurrence_is_owed_before_the_rules_own() -> None:
    snoozed = recurring(next_ms=START_MS + 90_000)  # moved off the every-minute grid
    assert at(snoozed, START_MS + 100_000).due == Due(START_MS + 90_000, 0)
    # Then the rule's own: 120 s and 180 s have passed too.
    assert at(snoozed, START_MS + 200_000).due == Due(START_MS + 180_000, 2)


def test_skip_delivers_a_recent_occurrence_and_skips_stale_ones() -> None:
    hourly = reminder(create2(every(3600, first_ms=START_MS + MINUTE, misfire="skip")))
    recent = START_MS + MINUTE + GRACE
    assert at(hourly, recent) == Plan("overdue", START_MS + MINUTE, Due(START_MS + MINUTE, 0))
    assert at(hourly, recent + 1) == Plan("scheduled", START_MS + MINUTE + 3_600_000)
    # Many missed, the latest recent: delivered alone, standing for none of the others.
    minutely = recurring(misfire="skip")
    assert at(minutely, START_MS + 60 * MINUTE).due == Due(START_MS + 60 * MINUTE, 0)


def test_a_skip_reminder_with_nothing_left_before_until_is_expired() -> None:
    item = recurring(misfire="skip", until_ms=START_MS + 3 * MINUTE)
    expired = at(item, START_MS + 60 * MINUTE)
    assert expired == Plan("scheduled", None, expired=True)
    assert expired.wake_ms is None


def test_paused_reminders_are_never_due() -> None:
    once = reminder(create2(record(paused=True)))
    assert at(once, START_MS + 86_400_000) == Plan("paused", START_MS + 10_000)
    item = recurring(paused=True)
    assert at(item, START_MS) == Plan("paused", START_MS + MINUTE)
    # What resuming would give: the next occurrence after now.
    assert at(item, START_MS + 10 * MINUTE + 1) == Plan("paused", START_MS + 11 * MINUTE)
    assert at(item, START_MS + 10 * MINUTE).wake_ms is None


def test_after_a_dispatch_the_next_occurrence_is_what_is_planned() -> None:
    item = reminder(
        create2(every(60, first_ms=START_MS + MINUTE)), dispatch2("rem-1", START_MS + MINUTE, 0)
    )
    assert at(item, START_MS + MINUTE) == Plan("scheduled", START_MS + 2 * MINUTE)
