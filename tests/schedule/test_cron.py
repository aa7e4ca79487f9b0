from __future__ import annotations

import itertools
from datetime import datetime

import pytest
from cronsim import CronSim
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_tool_schedule import cron as cron_module
from dsh_tool_schedule.cron import CronError, CronSeries, normalize_cron
from dsh_tool_schedule.timefmt import (
    MAX_TIMESTAMP_MS,
    MIN_TIMESTAMP_MS,
    format_timestamp,
    parse_timestamp,
)
from dsh_tool_schedule.zones import format_local, load_zone

from .reference import cron_occurrences

ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"]


def utc(text: str) -> int:
    return parse_timestamp(text)


def local(series: CronSeries, instants: list[int]) -> list[str]:
    return [format_local(instant, series.zone) for instant in instants]


def take(series: CronSeries, after: str, count: int) -> list[int]:
    return list(itertools.islice(series.after(utc(after)), count))


# -- expressions ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("0 9 * * MON-FRI", "0 9 * * MON-FRI"),
        ("  */15   * * * *  ", "*/15 * * * *"),
        ("0 9 L * *", "0 9 L * *"),
        ("0 9 * * 5L", "0 9 * * 5L"),
        ("0 9 * * mon#1", "0 9 * * mon#1"),
    ],
)
def test_five_field_expressions_are_accepted_with_single_spaces(text: str, normal: str) -> None:
    assert normalize_cron(text) == normal


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("0 9 * *", "has 4 fields"),
        ("0 0 9 * * *", "has 6 fields; a cron expression has exactly five"),
        ("@daily", "has 1 fields"),
        ("60 * * * *", "is not a valid cron expression: Bad minute"),
        ("0 24 * * *", "Bad hour"),
        ("0 0 30 2 *", "Bad day-of-month"),
        ("٣ * * * *", "has characters cron does not use"),
        ("0 9 * * $", "has characters cron does not use"),
        ("0 9 * * " + "1," * 100 + "2", "at most 200 characters"),
    ],
)
def test_other_expressions_say_why_they_are_refused(text: str, problem: str) -> None:
    with pytest.raises(CronError, match=problem.replace("$", r"\$")):
        normalize_cron(text)


def test_the_expression_in_words_comes_from_cronsim() -> None:
    series = CronSeries("0 9 * * MON-FRI", load_zone("UTC"))
    assert series.explain() == "At 09:00 on Monday through Friday"


def test_words_that_cronsim_cannot_give_fall_back_to_the_expression(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: CronSim) -> str:
        raise KeyError("no words")

    monkeypatch.setattr(CronSim, "explain", broken)
    assert CronSeries("0 9 * * *", load_zone("UTC")).explain() == (
        "on the cron schedule '0 9 * * *'"
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("* * * * *", 60),
        ("*/15 * * * *", 900),
        ("0 9 * * *", 86_400),
        ("0 9,17 * * *", 8 * 3600),
        ("30 23 * * *", 86_400),
        ("0,59 0,1 * * *", 60),
        ("59 23 * * *", 86_400),
        ("0 0,23 * * *", 3600),
    ],
)
def test_the_shortest_spacing_counts_wall_minutes_across_midnight(text: str, seconds: int) -> None:
    assert CronSeries(text, load_zone("UTC")).min_spacing_seconds() == seconds


# -- DST: spring forward -----------------------------------------------------------


def test_a_daily_time_inside_the_gap_runs_with_the_offset_before_it() -> None:
    series = CronSeries("30 2 * * *", load_zone("Europe/Berlin"))
    assert local(series, take(series, "2026-03-27T12:00:00.000Z", 4)) == [
        "2026-03-28T02:30:00+01:00",
        "2026-03-29T03:30:00+02:00",  # 02:30 does not exist: RFC 5545 reads it as 03:30
        "2026-03-30T02:30:00+02:00",
        "2026-03-31T02:30:00+02:00",
    ]


def test_gap_wall_times_that_land_on_later_ones_are_one_occurrence_each() -> None:
    series = CronSeries("*/30 * * * *", load_zone("America/New_York"))
    assert local(series, take(series, "2026-03-08T06:10:00.000Z", 5)) == [
        "2026-03-08T01:30:00-05:00",
        "2026-03-08T03:00:00-04:00",  # 02:00 → 03:00, the same instant as 03:00 itself
        "2026-03-08T03:30:00-04:00",  # 02:30 → 03:30, likewise
        "2026-03-08T04:00:00-04:00",
        "2026-03-08T04:30:00-04:00",
    ]


def test_lord_howes_half_hour_gap() -> None:
    # 2026-10-04 02:00 (+10:30) becomes 02:30 (+11:00).
    series = CronSeries("15 2 * * *", load_zone("Australia/Lord_Howe"))
    assert local(series, take(series, "2026-10-02T12:00:00.000Z", 3)) == [
        "2026-10-03T02:15:00+10:30",
        "2026-10-04T02:45:00+11:00",
        "2026-10-05T02:15:00+11:00",
    ]


def test_a_gap_instant_is_found_from_inside_the_hour_after_the_gap() -> None:
    series = CronSeries("45 2 * * *", load_zone("Europe/Berlin"))
    # 03:10 CEST on the spring-forward day: 02:45 (read as 03:45) is still ahead.
    start = utc("2026-03-29T01:10:00.000Z")
    assert format_local(series.next_after(start) or 0, series.zone) == "2026-03-29T03:45:00+02:00"
    later = utc("2026-03-29T01:50:00.000Z")
    assert series.last_at_or_before(later) == utc("2026-03-29T01:45:00.000Z")


def test_the_latest_occurrence_is_found_past_gap_instants() -> None:
    series = CronSeries("10,45 2,3 * * *", load_zone("Europe/Berlin"))
    # At 03:50 CEST: 03:45 (itself) and 02:45 (read as 03:45) are one instant, the latest.
    assert series.last_at_or_before(utc("2026-03-29T01:50:00.000Z")) == utc(
        "2026-03-29T01:45:00.000Z"
    )
    # At 03:20 CEST: 02:10 → 03:10 and 03:10 itself; 02:45 → 03:45 is still ahead.
    assert series.last_at_or_before(utc("2026-03-29T01:20:00.000Z")) == utc(
        "2026-03-29T01:10:00.000Z"
    )


# -- DST: fall back ------------------------------------------------------------------


def test_a_daily_time_inside_the_fold_runs_once_at_the_first() -> None:
    series = CronSeries("30 2 * * *", load_zone("Europe/Berlin"))
    assert local(series, take(series, "2026-10-24T12:00:00.000Z", 3)) == [
        "2026-10-25T02:30:00+02:00",
        "2026-10-26T02:30:00+01:00",
        "2026-10-27T02:30:00+01:00",
    ]


def test_every_wall_minute_of_the_fold_runs_once() -> None:
    series = CronSeries("*/20 * * * *", load_zone("America/New_York"))
    assert local(series, take(series, "2026-11-01T05:30:00.000Z", 6)) == [
        "2026-11-01T01:40:00-04:00",
        "2026-11-01T02:00:00-05:00",  # 01:00-01:59 happen twice; the second pass is skipped
        "2026-11-01T02:20:00-05:00",
        "2026-11-01T02:40:00-05:00",
        "2026-11-01T03:00:00-05:00",
        "2026-11-01T03:20:00-05:00",
    ]


def test_from_inside_the_second_pass_the_next_one_is_after_the_fold() -> None:
    series = CronSeries("*/20 * * * *", load_zone("America/New_York"))
    second_pass = utc("2026-11-01T06:10:00.000Z")  # 01:10 EST, the second 01:10
    assert format_local(series.next_after(second_pass) or 0, series.zone) == (
        "2026-11-01T02:00:00-05:00"
    )
    assert format_local(series.last_at_or_before(second_pass) or 0, series.zone) == (
        "2026-11-01T01:40:00-04:00"
    )


def test_kolkata_has_no_dst_and_a_half_hour_offset() -> None:
    series = CronSeries("0 9 * * *", load_zone("Asia/Kolkata"))
    assert [format_timestamp(x) for x in take(series, "2026-03-29T00:00:00.000Z", 2)] == [
        "2026-03-29T03:30:00.000Z",
        "2026-03-30T03:30:00.000Z",
    ]


# -- the ends of time ----------------------------------------------------------------


def test_no_occurrence_before_the_first_or_after_the_last_representable_time() -> None:
    yearly = CronSeries("0 12 1 1 *", load_zone("UTC"))
    assert yearly.next_after(MAX_TIMESTAMP_MS - 1000) is None
    assert yearly.last_at_or_before(MIN_TIMESTAMP_MS + 1000) is None
    assert CronSeries("0 0 1 1 *", load_zone("UTC")).last_at_or_before(MIN_TIMESTAMP_MS) == (
        MIN_TIMESTAMP_MS
    )
    kiribati = CronSeries("0 0 * * *", load_zone("Pacific/Kiritimati"))  # UTC+14
    assert kiribati.next_after(MAX_TIMESTAMP_MS - 3600_000) is None
    assert kiribati.last_at_or_before(MAX_TIMESTAMP_MS) is None
    samoa = CronSeries("0 0 * * *", load_zone("Pacific/Pago_Pago"))  # UTC-11
    assert samoa.last_at_or_before(MIN_TIMESTAMP_MS + 3600_000) is None


def test_wall_times_past_the_last_representable_instant_end_the_series() -> None:
    new_york = CronSeries("* * * * *", load_zone("America/New_York"))
    last = utc("9999-12-31T23:59:00.000Z")  # 18:59 in New York: 19:00 is past the year 9999
    assert new_york.next_after(last - 30_000) == last
    assert new_york.next_after(last) is None


def test_an_occurrence_in_the_last_gap_before_the_end_of_time_is_still_found() -> None:
    # The last Sunday of March 9999 is Berlin's last spring-forward day we can reach.
    series = CronSeries("30 2 * 3 SUN", load_zone("Europe/Berlin"))
    assert list(series.after(utc("9999-03-27T00:00:00.000Z"))) == [utc("9999-03-28T01:30:00.000Z")]


def test_a_rule_that_never_matches_again_ends() -> None:
    leap = CronSeries("0 0 29 2 *", load_zone("UTC"))
    assert leap.next_after(utc("9996-03-01T00:00:00.000Z")) is None
    assert leap.next_after(utc("2026-01-01T00:00:00.000Z")) == utc("2028-02-29T00:00:00.000Z")


# -- against the reference -------------------------------------------------------------

FIELDS_MINUTE = st.sampled_from(["0", "30", "*/15", "*/20", "5,35", "0-10/5", "45", "*"])
FIELDS_HOUR = st.sampled_from(["*", "1", "2", "3", "1-3", "0,2,4", "*/2", "23", "9"])
FIELDS_DOW = st.sampled_from(["*", "MON-FRI", "SUN", "0,6", "1-5", "SAT"])
TRANSITIONS = [
    # (zone, an instant near a 2026 DST change)
    ("Europe/Berlin", "2026-03-29T01:00:00.000Z"),
    ("Europe/Berlin", "2026-10-25T01:00:00.000Z"),
    ("America/New_York", "2026-03-08T07:00:00.000Z"),
    ("America/New_York", "2026-11-01T06:00:00.000Z"),
    ("Australia/Lord_Howe", "2026-04-04T15:00:00.000Z"),
    ("Australia/Lord_Howe", "2026-10-03T15:30:00.000Z"),
    ("Asia/Kolkata", "2026-03-29T00:00:00.000Z"),
]


@st.composite
def situations(draw: st.DrawFn) -> tuple[str, str, int]:
    expression = f"{draw(FIELDS_MINUTE)} {draw(FIELDS_HOUR)} * * {draw(FIELDS_DOW)}"
    zone, near = draw(st.sampled_from(TRANSITIONS))
    offset = draw(st.integers(-4 * 3600, 4 * 3600)) * 1000 + draw(st.integers(0, 999))
    return expression, zone, utc(near) + offset


@settings(max_examples=150, deadline=None)
@given(situations())
def test_occurrences_near_dst_changes_equal_a_minute_by_minute_reference(
    situation: tuple[str, str, int],
) -> None:
    expression, zone_name, instant = situation
    zone = load_zone(zone_name)
    series = CronSeries(expression, zone)
    window = 8 * 86_400_000
    expected = cron_occurrences(expression, zone, instant - window, instant + window)
    after = [x for x in expected if x > instant]
    before = [x for x in expected if x <= instant]
    got = list(itertools.takewhile(lambda x: x <= instant + window, series.after(instant)))
    assert got == after
    assert series.next_after(instant) == (after[0] if after else None)
    assert series.last_at_or_before(instant) == (before[-1] if before else None)


# -- counting without walking ------------------------------------------------------------

COUNT_TRANSITIONS = [
    *TRANSITIONS,
    ("Pacific/Apia", "2011-12-30T10:00:00.000Z"),  # Samoa skipped 30 December 2011: a day's gap
    ("Pacific/Chatham", "2026-04-05T02:45:00.000Z"),  # +13:45 → +12:45
    ("Europe/Berlin", "1893-03-31T23:06:32.000Z"),  # from local mean time +00:53:28 to CET
]
COUNT_DOM = st.sampled_from(["*", "*", "1", "L", "15-31", "29"])


@st.composite
def count_situations(draw: st.DrawFn) -> tuple[str, str, int, int]:
    minute, hour, dom = draw(FIELDS_MINUTE), draw(FIELDS_HOUR), draw(COUNT_DOM)
    expression = f"{minute} {hour} {dom} * {draw(FIELDS_DOW)}"
    zone, near = draw(st.sampled_from(COUNT_TRANSITIONS))
    seconds = draw(st.integers(-5 * 86_400, 3 * 86_400))
    start = utc(near) + seconds * 1000 + draw(st.integers(0, 999))
    return expression, zone, start, start + draw(st.integers(0, 9 * 86_400_000))


@settings(max_examples=200, deadline=None)
@given(count_situations())
def test_counting_equals_walking_the_occurrences_across_dst_changes(
    situation: tuple[str, str, int, int],
) -> None:
    expression, zone_name, start, stop = situation
    series = CronSeries(expression, load_zone(zone_name))
    walked = list(itertools.takewhile(lambda x: x < stop, series.after(start)))
    assert series.count_between(start, stop, 10**9) == len(walked)
    assert series.count_between(start, stop, 3) == min(len(walked), 3)


def test_a_minute_rule_missed_for_80_days_is_counted_to_the_minute() -> None:
    series = CronSeries("* * * * *", load_zone("Europe/Berlin"))
    start, stop = utc("2026-09-15T00:00:00.000Z"), utc("2026-12-04T00:00:00.000Z")
    # Every minute, less the hour of the fall-back fold's second pass (it has no occurrence).
    assert series.count_between(start, stop, 10**9) == (stop - start) // 60_000 - 1 - 60
    assert series.count_between(start, stop, 100_000) == 100_000


# -- whether an instant is an occurrence, without walking -------------------------------


@st.composite
def probe_situations(draw: st.DrawFn) -> tuple[str, str, int]:
    minute, hour, dom = draw(FIELDS_MINUTE), draw(FIELDS_HOUR), draw(COUNT_DOM)
    expression = f"{minute} {hour} {dom} * {draw(FIELDS_DOW)}"
    zone, near = draw(st.sampled_from(COUNT_TRANSITIONS))
    return expression, zone, utc(near) + draw(st.integers(-30 * 3600, 30 * 3600)) * 1000


@settings(max_examples=150, deadline=None)
@given(probe_situations())
def test_an_instant_is_an_occurrence_exactly_when_the_walk_reaches_it(
    situation: tuple[str, str, int],
) -> None:
    expression, zone_name, instant = situation
    series = CronSeries(expression, load_zone(zone_name))
    low, high = instant - 6 * 3_600_000, instant + 6 * 3_600_000
    walked = set(itertools.takewhile(lambda x: x < high, series.after(low)))
    # Each occurrence, and instants a millisecond, a minute, half an hour and an hour off.
    offsets = (0, 1, -1, 60_000, -60_000, 1_800_000, -1_800_000, 3_600_000, -3_600_000)
    probes = {instant, instant - instant % 60_000} | {x + d for x in walked for d in offsets}
    for probe in sorted(x for x in probes if low < x < high):
        assert series.occurs_at(probe) == (probe in walked), format_timestamp(probe)


def test_an_occurrence_in_a_gap_is_found_where_it_lands() -> None:
    series = CronSeries("30 2 * * *", load_zone("Europe/Berlin"))
    assert series.occurs_at(utc("2026-03-29T01:30:00.000Z"))  # 02:30 read as 03:30 CEST
    assert not series.occurs_at(utc("2026-03-29T00:30:00.000Z"))  # 01:30 CET
    assert series.occurs_at(utc("2026-10-25T00:30:00.000Z"))  # 02:30 CEST, the first pass
    assert not series.occurs_at(utc("2026-10-25T01:30:00.000Z"))  # 02:30 CET, the second


def test_an_instant_whose_wall_time_is_past_the_year_9999_is_no_occurrence() -> None:
    assert not CronSeries("* * * * *", load_zone("Pacific/Kiritimati")).occurs_at(
        MAX_TIMESTAMP_MS - 59_999
    )


def test_a_count_near_the_ends_of_time_stops_there() -> None:
    leap = CronSeries("0 0 29 2 *", load_zone("Europe/Berlin"))
    assert leap.count_between(utc("9980-01-01T00:00:00.000Z"), MAX_TIMESTAMP_MS, 100) == 5
    daily = CronSeries("0 12 * * *", load_zone("UTC"))
    start = utc("0001-01-02T00:00:00.000Z")
    assert daily.count_between(start, utc("0001-01-11T00:00:00.000Z"), 100) == 9
    assert daily.count_between(utc("9999-12-20T00:00:00.000Z"), MAX_TIMESTAMP_MS, 100) == 12


def test_a_count_the_arithmetic_cannot_finish_walks_the_occurrences(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def out_of_time(*_: object) -> int:
        raise ValueError("the time is outside the years 0001-9999")

    monkeypatch.setattr(cron_module._Count, "run", out_of_time)
    series = CronSeries("*/30 * * * *", load_zone("Europe/Berlin"))
    start = utc("2026-03-28T00:00:00.000Z")
    assert series.count_between(start, start + 2 * 86_400_000, 1000) == 2 * 48 - 1
    assert series.count_between(start, start + 2 * 86_400_000, 10) == 10
    daily = CronSeries("0 12 * * *", load_zone("UTC"))  # the walk ends with time itself
    assert daily.count_between(utc("9999-12-20T00:00:00.000Z"), MAX_TIMESTAMP_MS, 100) == 12


def test_an_empty_range_or_no_room_counts_nothing() -> None:
    series = CronSeries("* * * * *", load_zone("UTC"))
    start = utc("2026-01-01T00:00:00.000Z")
    assert series.count_between(start, start + 1, 100) == 0
    assert series.count_between(start, start + 3_600_000, 0) == 0
    assert series.count_between(start, start + 60_001, 100) == 1


def test_occurrences_are_instants_in_increasing_order_without_repeats() -> None:
    for zone in ZONES:
        series = CronSeries("*/10 1-3 * * *", load_zone(zone))
        got = take(series, "2026-03-01T00:00:00.000Z", 2000)
        assert got == sorted(set(got))


def test_the_walker_starts_from_a_naive_wall_time() -> None:
    walker = CronSim("0 9 * * *", datetime(2026, 1, 1, 8, 59))
    assert next(walker) == datetime(2026, 1, 1, 9, 0)


# -- the walk `next_after` keeps ---------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(situations())
def test_next_after_its_last_answer_continues_the_walk_and_agrees_with_a_fresh_one(
    situation: tuple[str, str, int],
) -> None:
    expression, zone_name, instant = situation
    zone = load_zone(zone_name)
    series = CronSeries(expression, zone)
    end = instant + 8 * 86_400_000
    expected = cron_occurrences(expression, zone, instant, end)
    chain: list[int] = []
    at = instant
    while (following := series.next_after(at)) is not None and following <= end:
        chain.append(following)
        at = following
    assert chain == [x for x in expected if x > instant]


def test_a_kept_walk_serves_only_the_occurrence_after_its_answer() -> None:
    series = CronSeries("0 9 * * *", load_zone("Europe/Berlin"))
    first = series.next_after(utc("2026-03-27T00:00:00.000Z"))
    assert first == utc("2026-03-27T08:00:00.000Z")
    assert series.next_after(first - 1) == first  # another question: a fresh walk
    assert series.next_after(first) == utc("2026-03-28T08:00:00.000Z")
    assert series.next_after(utc("2026-03-28T08:00:00.000Z")) == utc("2026-03-29T07:00:00.000Z")
    yearly = CronSeries("0 12 1 1 *", load_zone("UTC"))
    last = yearly.next_after(utc("9999-01-01T00:00:00.000Z"))
    assert last is not None and yearly.next_after(last) is None


def test_a_walk_in_use_by_another_thread_is_not_shared() -> None:
    series = CronSeries("*/5 * * * *", load_zone("UTC"))
    start = utc("2026-01-01T00:00:00.000Z")
    assert series.next_after(start) == start + 300_000
    with series._lock:  # another thread is continuing it
        assert series.next_after(start + 300_000) == start + 600_000
    assert series.next_after(start + 300_000) == start + 600_000
