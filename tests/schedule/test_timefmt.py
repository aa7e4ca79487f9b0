from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_tool_schedule.timefmt import (
    MAX_TIMESTAMP_MS,
    MIN_TIMESTAMP_MS,
    format_duration,
    format_timestamp,
    parse_timestamp,
)


def test_timestamps_are_utc_with_milliseconds_and_z() -> None:
    assert format_timestamp(1_767_225_610_004) == "2026-01-01T00:00:10.004Z"
    assert format_timestamp(0) == "1970-01-01T00:00:00.000Z"
    assert format_timestamp(-1) == "1969-12-31T23:59:59.999Z"
    assert parse_timestamp("2026-01-01T00:00:10.004Z") == 1_767_225_610_004


def test_the_bounds_are_the_years_0001_to_9999() -> None:
    assert format_timestamp(MIN_TIMESTAMP_MS) == "0001-01-01T00:00:00.000Z"
    assert format_timestamp(MAX_TIMESTAMP_MS) == "9999-12-31T23:59:59.999Z"
    for outside in (MIN_TIMESTAMP_MS - 1, MAX_TIMESTAMP_MS + 1):
        with pytest.raises(ValueError, match="outside the years"):
            format_timestamp(outside)


@given(st.integers(MIN_TIMESTAMP_MS, MAX_TIMESTAMP_MS))
def test_every_instant_has_one_spelling_that_parses_back(epoch_ms: int) -> None:
    assert parse_timestamp(format_timestamp(epoch_ms)) == epoch_ms


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-01T00:00:10Z",
        "2026-01-01T00:00:10.0Z",
        "2026-01-01T00:00:10.0000Z",
        "2026-01-01T00:00:10.000",
        "2026-01-01T00:00:10.000+00:00",
        "2026-01-01 00:00:10.000Z",
        "2026-01-01t00:00:10.000z",
        "26-01-01T00:00:10.000Z",
        "+2026-01-01T00:00:10.000Z",
        "2026-01-01T00:00:10.000Z\n",
        "２026-01-01T00:00:10.000Z",
    ],
)
def test_other_spellings_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="not a UTC timestamp"):
        parse_timestamp(text)


@pytest.mark.parametrize(
    "text",
    [
        "2026-02-30T00:00:10.000Z",
        "2026-13-01T00:00:10.000Z",
        "2026-01-01T24:00:00.000Z",
        "2026-01-01T23:59:60.000Z",
        "0000-01-01T00:00:00.000Z",
    ],
)
def test_impossible_instants_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="not a valid UTC time"):
        parse_timestamp(text)


@pytest.mark.parametrize(
    ("milliseconds", "text"),
    [
        (-5, "0s"),
        (0, "0s"),
        (999, "0s"),
        (45_000, "45s"),
        (59_999, "59s"),
        (60_000, "1m 00s"),
        (185_000, "3m 05s"),
        (3_600_000, "1h 00m 00s"),
        (7_384_000, "2h 03m 04s"),
        (86_399_999, "23h 59m 59s"),
        (86_400_000, "1d 00h 00m"),
        (273_959_000, "3d 04h 05m"),
    ],
)
def test_durations_read_as_fixed_units_rounded_down(milliseconds: int, text: str) -> None:
    assert format_duration(milliseconds) == text
