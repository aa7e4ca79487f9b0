from __future__ import annotations

import pytest

from dsh_tool_schedule import series as series_module
from dsh_tool_schedule.protocol import Record
from dsh_tool_schedule.series import Bounded, Every, Never, series_of
from dsh_tool_schedule.timefmt import MAX_TIMESTAMP_MS, parse_timestamp

from .conftest import START_MS
from .logs import cron, every, record

MINUTE = 60_000


def test_a_one_shot_rule_has_no_occurrence_of_its_own() -> None:
    never = series_of(Record.model_validate(record()))
    assert isinstance(never.series, Never)
    assert never.next_after(0) is None
    assert never.last_at_or_before(MAX_TIMESTAMP_MS) is None
    assert never.count_between(0, MAX_TIMESTAMP_MS) == 0


def test_every_is_its_anchor_plus_whole_periods() -> None:
    series = Every(START_MS, MINUTE)
    assert series.next_after(START_MS - 1) == START_MS
    assert series.next_after(START_MS) == START_MS + MINUTE
    assert series.next_after(START_MS + MINUTE - 1) == START_MS + MINUTE
    assert series.last_at_or_before(START_MS - 1) is None
    assert series.last_at_or_before(START_MS + 2 * MINUTE + 5) == START_MS + 2 * MINUTE
    assert series.count_between(START_MS, START_MS + 3 * MINUTE) == 2
    assert series.count_between(START_MS, START_MS + MINUTE) == 0
    assert series.count_between(START_MS - 1, START_MS + 1) == 1


def test_every_ends_at_the_latest_representable_time() -> None:
    assert Every(MAX_TIMESTAMP_MS - MINUTE, MINUTE).next_after(MAX_TIMESTAMP_MS - 1) == (
        MAX_TIMESTAMP_MS
    )
    assert Every(MAX_TIMESTAMP_MS - MINUTE + 1, MINUTE).next_after(MAX_TIMESTAMP_MS - 1) is None


def test_counting_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(series_module, "COUNT_CAP", 5)
    assert Every(START_MS, MINUTE).count_between(START_MS, START_MS + 100 * MINUTE) == 5
    minutely = series_of(Record.model_validate(cron("* * * * *", START_MS)))
    assert minutely.count_between(START_MS, START_MS + 100 * MINUTE) == 5
    assert minutely.count_between(START_MS, START_MS + 3 * MINUTE) == 2


def test_a_cron_that_ends_counts_what_it_has() -> None:
    leap = series_of(
        Record.model_validate(cron("0 0 29 2 *", parse_timestamp("9996-02-29T00:00:00.000Z")))
    )
    assert leap.count_between(parse_timestamp("9990-01-01T00:00:00.000Z"), MAX_TIMESTAMP_MS) == 2


def test_until_cuts_the_series() -> None:
    bounded = series_of(Record.model_validate(every(60, until_ms=START_MS + 3 * MINUTE)))
    assert bounded.next_after(START_MS + 2 * MINUTE) == START_MS + 3 * MINUTE
    assert bounded.next_after(START_MS + 3 * MINUTE) is None
    assert bounded.last_at_or_before(START_MS + 10 * MINUTE) == START_MS + 3 * MINUTE
    assert bounded.count_between(START_MS, START_MS + 10 * MINUTE) == 3
    assert bounded.count_between(START_MS, START_MS + 3 * MINUTE) == 2
    assert Bounded(Never(), None).next_after(0) is None


def test_a_cron_record_is_read_in_its_zone() -> None:
    first = parse_timestamp("2026-01-05T08:00:00.000Z")
    weekdays = series_of(
        Record.model_validate(cron("0 9 * * MON-FRI", first, zone="Europe/Berlin"))
    )
    assert weekdays.next_after(first) == parse_timestamp("2026-01-06T08:00:00.000Z")
    friday = parse_timestamp("2026-01-09T08:00:00.000Z")
    assert weekdays.next_after(friday) == parse_timestamp("2026-01-12T08:00:00.000Z")
    assert weekdays.last_at_or_before(friday + 1) == friday
    assert weekdays.count_between(first, friday) == 3
