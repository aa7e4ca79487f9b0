from __future__ import annotations

import weakref

import pytest

from dsh_tool_schedule import series as series_module
from dsh_tool_schedule.protocol import Record
from dsh_tool_schedule.series import Bounded, Every, Following, Never, Series, series_of
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


def test_whether_an_instant_is_an_occurrence_is_answered_by_each_series() -> None:
    assert not Never().occurs_at(START_MS)
    every_minute = Every(START_MS, MINUTE)
    assert every_minute.occurs_at(START_MS) and every_minute.occurs_at(START_MS + 5 * MINUTE)
    assert not every_minute.occurs_at(START_MS - MINUTE)
    assert not every_minute.occurs_at(START_MS + MINUTE + 1)
    assert Every(MAX_TIMESTAMP_MS - MINUTE, MINUTE).occurs_at(MAX_TIMESTAMP_MS)
    assert not Every(MAX_TIMESTAMP_MS - MINUTE, MINUTE).occurs_at(MAX_TIMESTAMP_MS + MINUTE)
    bounded = Bounded(every_minute, START_MS + 3 * MINUTE)
    assert bounded.occurs_at(START_MS + 3 * MINUTE)
    assert not bounded.occurs_at(START_MS + 4 * MINUTE)
    assert Bounded(every_minute, None).occurs_at(START_MS + 4 * MINUTE)
    weekdays = series_of(Record.model_validate(cron("0 9 * * MON-FRI", START_MS)))
    assert weekdays.occurs_at(parse_timestamp("2026-01-02T09:00:00.000Z"))  # a Friday
    assert not weekdays.occurs_at(parse_timestamp("2026-01-03T09:00:00.000Z"))  # a Saturday


class _Asked:
    """A series that records what it was asked (the laziness `Following` promises)."""

    def __init__(self, series: Series) -> None:
        self.series = series
        self.asked: list[str] = []

    def next_after(self, epoch_ms: int) -> int | None:
        self.asked.append("next_after")
        return self.series.next_after(epoch_ms)

    def last_at_or_before(self, epoch_ms: int) -> int | None:
        raise AssertionError("not asked")

    def occurs_at(self, epoch_ms: int) -> bool:
        self.asked.append("occurs_at")
        return self.series.occurs_at(epoch_ms)

    def count_between(self, start_ms: int, stop_ms: int) -> int:
        raise AssertionError("not asked")


def test_a_following_occurrence_is_looked_up_once_and_only_when_asked() -> None:
    asked = _Asked(Every(START_MS, MINUTE))
    following = Following(asked, START_MS)
    assert asked.asked == []
    assert following.ms() == START_MS + MINUTE
    assert following.ms() == START_MS + MINUTE
    assert asked.asked == ["next_after"]
    assert following.exists(START_MS + 7 * MINUTE)  # known: nothing more is asked
    assert asked.asked == ["next_after"]
    assert repr(following) == f"Following(after_ms={START_MS})"


def test_an_answered_following_lets_its_series_go() -> None:
    asked = _Asked(Every(START_MS, MINUTE))
    following = Following(asked, START_MS)
    held = weakref.ref(asked)
    del asked
    assert held() is not None
    following.ms()
    assert held() is None


def test_an_occurrence_after_it_proves_a_following_one_exists_without_looking_it_up() -> None:
    asked = _Asked(Every(START_MS, MINUTE))
    assert Following(asked, START_MS).exists(START_MS + 3 * MINUTE)
    assert asked.asked == ["occurs_at"]
    # Not an occurrence, none given, or not after it: it is looked up.
    for hint in (START_MS + 3 * MINUTE + 1, None, START_MS):
        asked.asked.clear()
        assert Following(asked, START_MS).exists(hint)
        assert asked.asked[-1] == "next_after"
    bounded = Bounded(Every(START_MS, MINUTE), START_MS + MINUTE)
    assert not Following(bounded, START_MS + MINUTE).exists(START_MS + 2 * MINUTE)


def test_followings_are_equal_when_they_answer_the_same() -> None:
    minute, other = Every(START_MS, MINUTE), Every(START_MS + MINUTE, 2 * MINUTE)
    assert Following(minute, START_MS) == Following(other, START_MS - 1)
    assert Following(minute, START_MS) != Following(minute, START_MS + MINUTE)
    assert Following(minute, START_MS) != START_MS + MINUTE
    assert hash(Following(minute, START_MS)) == hash(START_MS + MINUTE)
