from __future__ import annotations

from datetime import datetime

import pytest

from dsh_tool_schedule.timefmt import MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, parse_timestamp
from dsh_tool_schedule.zones import (
    format_local,
    is_gap,
    load_zone,
    offset_ms,
    parse_local_time,
    resolve_wall,
    wall_of,
)

BERLIN = load_zone("Europe/Berlin")
NEW_YORK = load_zone("America/New_York")
LORD_HOWE = load_zone("Australia/Lord_Howe")
KOLKATA = load_zone("Asia/Kolkata")


def utc(text: str) -> int:
    return parse_timestamp(text)


def test_unknown_or_malformed_zones_are_named_in_the_error() -> None:
    assert load_zone("Europe/Berlin").key == "Europe/Berlin"
    for name in ("Mars/Olympus", "../../etc/passwd", "", "Europe/Berlin ", "Europe", "Etc"):
        with pytest.raises(ValueError, match="zone"):
            load_zone(name)


def test_an_ordinary_wall_time_has_its_zones_offset() -> None:
    assert resolve_wall(datetime(2026, 1, 2, 9, 0), BERLIN) == utc("2026-01-02T08:00:00.000Z")
    assert resolve_wall(datetime(2026, 7, 2, 9, 0), BERLIN) == utc("2026-07-02T07:00:00.000Z")
    assert resolve_wall(datetime(2026, 1, 2, 9, 0), KOLKATA) == utc("2026-01-02T03:30:00.000Z")


def test_a_wall_time_in_a_spring_forward_gap_uses_the_offset_before_it() -> None:
    # Berlin 2026-03-29: 02:00 CET becomes 03:00 CEST. 02:30 runs at 03:30 CEST.
    wall = datetime(2026, 3, 29, 2, 30)
    assert is_gap(wall, BERLIN)
    assert resolve_wall(wall, BERLIN) == utc("2026-03-29T01:30:00.000Z")
    assert format_local(utc("2026-03-29T01:30:00.000Z"), BERLIN) == "2026-03-29T03:30:00+02:00"
    # New York 2026-03-08: 02:00 EST becomes 03:00 EDT.
    assert resolve_wall(datetime(2026, 3, 8, 2, 30), NEW_YORK) == utc("2026-03-08T07:30:00.000Z")
    # Lord Howe 2026-10-04: 02:00 (+10:30) becomes 02:30 (+11:00), a 30-minute gap.
    wall = datetime(2026, 10, 4, 2, 15)
    assert is_gap(wall, LORD_HOWE)
    assert format_local(resolve_wall(wall, LORD_HOWE), LORD_HOWE) == "2026-10-04T02:45:00+11:00"


def test_a_wall_time_in_a_fall_back_fold_is_the_first_of_its_two_instants() -> None:
    # Berlin 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:30 happens twice.
    wall = datetime(2026, 10, 25, 2, 30)
    assert not is_gap(wall, BERLIN)
    assert resolve_wall(wall, BERLIN) == utc("2026-10-25T00:30:00.000Z")
    second = wall_of(utc("2026-10-25T01:30:00.000Z"), BERLIN)
    assert (second, second.fold) == (wall, 1)
    # Lord Howe 2026-04-05: 02:00 (+11:00) becomes 01:30 (+10:30).
    assert format_local(resolve_wall(datetime(2026, 4, 5, 1, 45), LORD_HOWE), LORD_HOWE) == (
        "2026-04-05T01:45:00+11:00"
    )


def test_offsets_are_read_at_an_instant() -> None:
    assert offset_ms(utc("2026-01-02T00:00:00.000Z"), BERLIN) == 3_600_000
    assert offset_ms(utc("2026-07-02T00:00:00.000Z"), BERLIN) == 7_200_000
    assert offset_ms(utc("2026-07-02T00:00:00.000Z"), LORD_HOWE) == 10.5 * 3_600_000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-02T09:00", "2026-01-02T08:00:00.000Z"),
        ("2026-01-02T09:00:30", "2026-01-02T08:00:30.000Z"),
        ("2026-01-02T09:00Z", "2026-01-02T09:00:00.000Z"),
        ("2026-01-02T09:00:00+05:30", "2026-01-02T03:30:00.000Z"),
        ("2026-01-02T09:00-03:00", "2026-01-02T12:00:00.000Z"),
        ("2026-03-29T02:30", "2026-03-29T01:30:00.000Z"),
    ],
)
def test_local_times_are_read_in_the_zone_unless_they_carry_an_offset(
    text: str, expected: str
) -> None:
    assert parse_local_time(text, BERLIN) == utc(expected)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("2026-01-02 09:00", "is not a time like"),
        ("2026-01-02T9:00", "is not a time like"),
        ("2026-01-02T09:00:00.5", "is not a time like"),
        ("2026-01-02T09", "is not a time like"),
        ("２０２６-01-02T09:00", "is not a time like"),
        ("2026-02-30T09:00", "is not a valid time"),
        ("2026-01-02T24:00", "is not a valid time"),
        ("2026-01-02T09:00+24:00", "impossible UTC offset"),
        ("2026-01-02T09:00+05:60", "impossible UTC offset"),
        ("9999-12-31T23:59-05:00", "outside the years"),
        ("0001-01-01T00:00+05:00", "outside the years"),
    ],
)
def test_bad_local_times_say_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_local_time(text, BERLIN)


def test_a_non_string_is_not_a_local_time() -> None:
    with pytest.raises(ValueError, match="is not a time like"):
        parse_local_time(5, BERLIN)  # type: ignore[arg-type]


def test_times_beyond_the_local_calendar_are_errors_or_written_in_utc() -> None:
    tonga = load_zone("Pacific/Tongatapu")
    with pytest.raises(ValueError, match="outside the years"):
        wall_of(MAX_TIMESTAMP_MS, tonga)
    with pytest.raises(ValueError, match="outside the years"):
        offset_ms(MAX_TIMESTAMP_MS, tonga)
    assert format_local(MAX_TIMESTAMP_MS, tonga) == "9999-12-31T23:59:59.999Z"
    with pytest.raises(ValueError, match="outside the years"):
        resolve_wall(datetime(9999, 12, 31, 23, 59), NEW_YORK)
    with pytest.raises(ValueError, match="outside the years"):
        resolve_wall(datetime(1, 1, 1, 0, 0), tonga)
    assert resolve_wall(datetime(1, 1, 2), tonga) > MIN_TIMESTAMP_MS
