from __future__ import annotations

from typing import Any

import pytest

from dsh import ToolError
from dsh_tool_schedule.drafts import (
    PAST_GRACE_MS,
    UNSET,
    CreateRequest,
    RuleRequest,
    UpdateRequest,
    draft_create,
    draft_snooze,
    draft_update,
)
from dsh_tool_schedule.fold import Reminder, ScheduleFold
from dsh_tool_schedule.ids import ReminderId
from dsh_tool_schedule.protocol import Record
from dsh_tool_schedule.timefmt import MAX_TIMESTAMP_MS, parse_timestamp

from .conftest import START_MS
from .logs import create2, cron, dispatch2, every, record, session

NOW = START_MS  # 2026-01-01T00:00:00Z, a Thursday
MINUTE = 60_000


def make(rule: RuleRequest, **fields: Any) -> Record:
    request = CreateRequest(prompt="stretch", rule=rule, **fields)
    return draft_create(
        request, reminder_id=ReminderId("rem-1"), now_ms=NOW, default_zone="UTC", min_interval=60
    )


def refused(code: str, rule: RuleRequest, **fields: Any) -> str:
    with pytest.raises(ToolError) as caught:
        make(rule, **fields)
    assert caught.value.code == code, caught.value.message
    return caught.value.message


def utc(text: str) -> int:
    return parse_timestamp(text)


# -- create --------------------------------------------------------------------------------


def test_after_seconds_is_once_from_now() -> None:
    made = make(RuleRequest(after_seconds=600))
    assert made.rule.to_data() == {"kind": "after", "seconds": 600}
    assert (made.first_ms, made.next_ms) == (NOW + 600_000, NOW + 600_000)
    assert (made.time_zone, made.misfire, made.paused, made.revision) == ("UTC", "latest", False, 1)


def test_after_seconds_past_the_year_9999_is_invalid_rule() -> None:
    latest = (MAX_TIMESTAMP_MS - NOW) // 1000
    assert make(RuleRequest(after_seconds=latest)).next_at.startswith("9999-12-31T23:59:")
    assert "9999-12-31T23:59:59.999Z" in refused(
        "invalid_rule", RuleRequest(after_seconds=latest + 1)
    )


def test_at_is_a_local_time_in_the_zone_with_rfc_5545_gaps() -> None:
    made = make(RuleRequest(at="2026-03-29T02:30"), time_zone="Europe/Berlin")
    assert made.rule.to_data() == {"kind": "at", "at": "2026-03-29T02:30"}
    assert made.next_at == "2026-03-29T01:30:00.000Z"  # 03:30 CEST
    assert make(RuleRequest(at="2026-01-02T09:00+05:30"), time_zone="Europe/Berlin").next_at == (
        "2026-01-02T03:30:00.000Z"
    )


def test_at_in_the_past_beyond_a_minute_is_invalid_rule() -> None:
    assert make(RuleRequest(at="2025-12-31T23:59:30")).next_ms == NOW - 30_000
    message = refused("invalid_rule", RuleRequest(at="2025-12-31T23:58:59"))
    assert "has passed" in message
    assert utc("2025-12-31T23:58:59.000Z") < NOW - PAST_GRACE_MS


def test_bad_times_and_zones_name_the_argument() -> None:
    assert refused("invalid_rule", RuleRequest(at="tomorrow 9")).startswith("at: ")
    assert refused("invalid_rule", RuleRequest(after_seconds=5), time_zone="Mars/Base").startswith(
        "time_zone: unknown time zone 'Mars/Base'"
    )
    # A folder of the zone database is no zone either, and the message names no path.
    assert refused("invalid_rule", RuleRequest(after_seconds=5), time_zone="Europe") == (
        "time_zone: unknown time zone 'Europe': expected an IANA name such as 'Europe/Berlin'"
    )
    assert refused("invalid_rule", RuleRequest(every_seconds=60), until="never").startswith(
        "until: "
    )


def test_the_default_zone_is_used_unless_one_is_given() -> None:
    request = CreateRequest(prompt="x", rule=RuleRequest(at="2026-01-02T09:00"))
    made = draft_create(
        request,
        reminder_id=ReminderId("rem-1"),
        now_ms=NOW,
        default_zone="Asia/Kolkata",
        min_interval=60,
    )
    assert (made.time_zone, made.next_at) == ("Asia/Kolkata", "2026-01-02T03:30:00.000Z")


def test_every_starts_one_interval_from_now_or_at_its_at() -> None:
    made = make(RuleRequest(every_seconds=7200))
    assert made.rule.to_data() == {"kind": "every", "seconds": 7200}
    assert (made.first_ms, made.next_ms) == (NOW + 7_200_000, NOW + 7_200_000)
    anchored = make(
        RuleRequest(every_seconds=86_400, at="2026-01-01T09:00"), time_zone="Europe/Berlin"
    )
    assert anchored.rule.to_data() == {"kind": "every", "seconds": 86_400, "at": "2026-01-01T09:00"}
    assert anchored.next_at == "2026-01-01T08:00:00.000Z"


def test_every_with_an_at_that_has_passed_is_refused_as_a_one_shot_is() -> None:
    for at in ("2025-12-31T20:30", "1970-01-01T00:00"):
        message = refused("invalid_rule", RuleRequest(every_seconds=3600, at=at))
        assert message.startswith(f"at={at!r} is ")
        assert "has passed" in message and "give one from now on" in message
    # Within the minute's grace it is the first occurrence, due at once.
    made = make(RuleRequest(every_seconds=3600, at="2025-12-31T23:59:30"))
    assert made.next_at == "2025-12-31T23:59:30.000Z"


def test_a_zone_change_rereads_an_every_at_that_has_passed_from_now() -> None:
    daily = every(86_400, first_ms=utc("2026-01-01T08:00:00.000Z"), zone="Europe/Berlin")
    anchored = {**daily, "rule": {"kind": "every", "seconds": 86_400, "at": "2026-01-01T09:00"}}
    item = reminder(create2(anchored), dispatch2("rem-1", utc("2026-01-01T08:00:00.000Z"), 0))
    moved = update(item, NOW + 5 * 86_400_000, time_zone="America/New_York")
    assert moved.first_at == "2026-01-01T14:00:00.000Z"  # 09:00 in New York
    assert moved.next_at == "2026-01-06T14:00:00.000Z"  # its first occurrence from now on
    # A new rule is no re-read: its at must not have passed.
    with pytest.raises(ToolError) as caught:
        update(
            item,
            NOW + 5 * 86_400_000,
            rule=RuleRequest(every_seconds=86_400, at="2026-01-01T09:00"),
        )
    assert caught.value.code == "invalid_rule"
    assert caught.value.message.startswith("at='2026-01-01T09:00' is ")


def test_every_more_often_than_the_minimum_interval_is_limit_exceeded() -> None:
    assert "at least 60 seconds (1 minute)" in refused(
        "limit_exceeded", RuleRequest(every_seconds=59)
    )
    request = CreateRequest(prompt="x", rule=RuleRequest(every_seconds=2))
    lowered = draft_create(
        request, reminder_id=ReminderId("rem-1"), now_ms=NOW, default_zone="UTC", min_interval=1
    )
    assert lowered.next_ms == NOW + 2000


def test_every_that_never_fires_before_year_10000_is_invalid_rule() -> None:
    assert "never fires" in refused("invalid_rule", RuleRequest(every_seconds=2**53 - 1))


def test_cron_is_the_first_match_after_now_in_the_zone() -> None:
    made = make(RuleRequest(cron="0  9 * *  MON-FRI"), time_zone="Europe/Berlin")
    assert made.rule.to_data() == {"kind": "cron", "cron": "0 9 * * MON-FRI"}
    assert made.next_at == "2026-01-01T08:00:00.000Z"
    assert refused("invalid_rule", RuleRequest(cron="0 9 * *")).startswith("cron: ")


def test_a_cron_denser_than_the_minimum_interval_is_limit_exceeded() -> None:
    assert make(RuleRequest(cron="* * * * *")).next_ms == NOW + MINUTE  # 60 s is allowed
    request = CreateRequest(prompt="x", rule=RuleRequest(cron="*/5 * * * *"))
    with pytest.raises(ToolError, match="fires 5 minutes apart"):
        draft_create(
            request,
            reminder_id=ReminderId("rem-1"),
            now_ms=NOW,
            default_zone="UTC",
            min_interval=600,
        )


def test_a_cron_that_never_matches_again_is_invalid_rule() -> None:
    late = CreateRequest(prompt="x", rule=RuleRequest(cron="0 0 29 2 *"))
    with pytest.raises(ToolError, match="never matches"):
        draft_create(
            late,
            reminder_id=ReminderId("rem-1"),
            now_ms=utc("9996-03-01T00:00:00.000Z"),
            default_zone="UTC",
            min_interval=60,
        )


def test_until_and_count_end_recurring_rules_only() -> None:
    made = make(RuleRequest(every_seconds=3600), until="2026-01-02T00:00", count=3)
    assert (made.until, made.count) == ("2026-01-02T00:00:00.000Z", 3)
    assert "a one-shot fires once" in refused("invalid_rule", RuleRequest(after_seconds=5), count=2)
    assert "a one-shot fires once" in refused(
        "invalid_rule", RuleRequest(at="2026-01-02T09:00"), until="2026-01-03T00:00"
    )


def test_an_until_before_the_first_occurrence_is_invalid_rule() -> None:
    message = refused(
        "invalid_rule", RuleRequest(cron="0 9 * * *"), until="2026-01-01T08:00", time_zone="UTC"
    )
    assert "before the first occurrence 2026-01-01T09:00:00.000Z" in message


def test_misfire_is_recorded() -> None:
    assert make(RuleRequest(every_seconds=60), misfire="skip").misfire == "skip"


# -- update ----------------------------------------------------------------------------------


def reminder(*entries: Any) -> Reminder:
    found = ScheduleFold.of(session(*entries)).get("rem-1")
    assert found is not None
    return found


def update(item: Reminder, now: int = NOW, **fields: Any) -> Record:
    return draft_update(item, UpdateRequest(**fields), now_ms=now, min_interval=60)


def refused_update(item: Reminder, **fields: Any) -> str:
    with pytest.raises(ToolError) as caught:
        update(item, **fields)
    assert caught.value.code == "invalid_rule", caught.value.message
    return caught.value.message


HOURLY = every(3600, first_ms=NOW + 3_600_000)


def test_an_update_keeps_what_it_does_not_mention_and_steps_the_revision() -> None:
    item = reminder(create2(HOURLY), dispatch2("rem-1", NOW + 3_600_000, 0))
    made = update(item, NOW + 3_700_000, prompt="renamed")
    assert made.prompt == "renamed"
    assert made.revision == 2
    assert (made.rule, made.first_at, made.time_zone) == (
        item.record.rule,
        item.record.first_at,
        "UTC",
    )
    assert made.next_ms == NOW + 7_200_000  # what the fold says is owed, not the old nextAt


def test_a_new_rule_is_scheduled_from_now() -> None:
    item = reminder(create2(HOURLY))
    made = update(
        item, NOW + 60_000, rule=RuleRequest(at="2026-01-01T10:00"), time_zone="Asia/Kolkata"
    )
    assert made.rule.to_data() == {"kind": "at", "at": "2026-01-01T10:00"}
    assert (made.time_zone, made.next_at) == ("Asia/Kolkata", "2026-01-01T04:30:00.000Z")


def test_a_zone_change_rereads_wall_time_rules_and_keeps_elapsed_ones() -> None:
    berlin = cron("0 9 * * *", utc("2026-01-01T08:00:00.000Z"), zone="Europe/Berlin")
    assert update(reminder(create2(berlin)), time_zone="America/New_York").next_at == (
        "2026-01-01T14:00:00.000Z"
    )
    at = record(rule={"kind": "at", "at": "2026-01-01T09:00"}, zone="Europe/Berlin")
    assert update(reminder(create2(at)), time_zone="UTC").next_at == "2026-01-01T09:00:00.000Z"
    anchored = every(
        86_400,
        first_ms=utc("2026-01-01T08:00:00.000Z"),
        zone="Europe/Berlin",
    )
    anchored["rule"]["at"] = "2026-01-01T09:00"
    assert update(reminder(create2(anchored)), time_zone="UTC").next_at == (
        "2026-01-01T09:00:00.000Z"
    )
    elapsed = update(reminder(create2(HOURLY)), time_zone="Europe/Berlin")
    assert (elapsed.time_zone, elapsed.next_ms) == ("Europe/Berlin", NOW + 3_600_000)


def test_pausing_and_resuming() -> None:
    item = reminder(create2(HOURLY))
    assert update(item, paused=True).paused
    paused = reminder(create2(every(3600, first_ms=NOW + 3_600_000, paused=True)))
    # Resumed after three occurrences passed: they are not made up.
    resumed = update(paused, NOW + 3 * 3_600_000 + 60_000, paused=False)
    assert (resumed.paused, resumed.next_ms) == (False, NOW + 4 * 3_600_000)
    # Resumed before the next one: it stands.
    assert update(paused, NOW, paused=False).next_ms == NOW + 3_600_000
    once = reminder(create2(record(paused=True)))
    assert update(once, NOW + 86_400_000, paused=False).next_ms == START_MS + 10_000


def test_until_and_count_can_be_set_kept_or_cleared() -> None:
    item = reminder(
        create2(every(3600, first_ms=NOW + 3_600_000, count=5, until_ms=NOW + 86_400_000))
    )
    kept = update(item, prompt="x")
    assert (kept.count, kept.until) == (5, "2026-01-02T00:00:00.000Z")
    cleared = update(item, count=None, until=None)
    assert (cleared.count, cleared.until) == (None, None)
    changed = update(item, count=2, until="2026-01-01T12:00")
    assert (changed.count, changed.until) == (2, "2026-01-01T12:00:00.000Z")
    assert update(item, until=UNSET).until == kept.until


def test_a_count_not_above_the_deliveries_is_invalid_rule() -> None:
    item = reminder(create2(HOURLY), dispatch2("rem-1", NOW + 3_600_000, 0))
    assert "already delivered" in refused_update(item, count=1)
    assert update(item, count=2).count == 2


def test_a_kept_until_before_the_new_next_occurrence_is_invalid_rule() -> None:
    item = reminder(create2(every(3600, first_ms=NOW + 3_600_000, until_ms=NOW + 7_200_000)))
    message = refused_update(item, rule=RuleRequest(cron="0 9 * * *"))
    assert "is after until=2026-01-01T02:00:00.000Z" in message


def test_turning_a_recurring_rule_into_a_one_shot_drops_its_ends() -> None:
    item = reminder(
        create2(every(3600, first_ms=NOW + 3_600_000, count=5, until_ms=NOW + 86_400_000))
    )
    made = update(item, rule=RuleRequest(after_seconds=60))
    assert (made.count, made.until) == (None, None)
    assert "a one-shot fires once" in refused_update(
        item, rule=RuleRequest(after_seconds=60), count=2
    )


def test_misfire_can_change() -> None:
    assert update(reminder(create2(HOURLY)), misfire="skip").misfire == "skip"


# -- snooze ------------------------------------------------------------------------------


def test_a_snooze_postpones_the_shown_occurrence_and_keeps_the_rule() -> None:
    item = reminder(create2(HOURLY))
    made = draft_snooze(item, 600, now_ms=NOW, shown_ms=NOW + 3_600_000)
    assert (made.next_ms, made.paused, made.revision) == (NOW + 4_200_000, False, 2)
    assert (made.rule, made.first_ms) == (item.record.rule, NOW + 3_600_000)


def test_a_due_reminder_snoozed_comes_back_that_long_from_now() -> None:
    item = reminder(create2(record(first_ms=NOW - MINUTE)))  # a one-shot, overdue
    made = draft_snooze(item, 600, now_ms=NOW, shown_ms=NOW - MINUTE)
    assert made.next_ms == NOW + 600_000


def test_a_paused_reminder_is_not_snoozed() -> None:
    item = reminder(create2(every(3600, first_ms=NOW + 3_600_000, paused=True)))
    with pytest.raises(ToolError) as caught:
        draft_snooze(item, 600, now_ms=NOW, shown_ms=NOW + 3_600_000)
    assert caught.value.code == "schedule_paused"
    assert "resume it" in caught.value.message


def test_a_snooze_past_until_or_the_year_9999_is_invalid_rule() -> None:
    ends = reminder(create2(every(3600, first_ms=NOW + 3_600_000, until_ms=NOW + 3_900_000)))
    with pytest.raises(ToolError, match=r"after its until 2026-01-01T01:05:00\.000Z"):
        draft_snooze(ends, 600, now_ms=NOW, shown_ms=NOW + 3_600_000)
    assert draft_snooze(ends, 300, now_ms=NOW, shown_ms=NOW + 3_600_000).next_ms == NOW + 3_900_000
    item = reminder(create2(HOURLY))
    with pytest.raises(ToolError, match="passes the year 9999"):
        draft_snooze(item, 2**53 - 1, now_ms=NOW, shown_ms=NOW)
