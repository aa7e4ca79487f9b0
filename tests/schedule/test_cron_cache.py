from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_tool_schedule.cron import CronError, CronExpression
from dsh_tool_schedule.cron_cache import DEFAULT_SIZE, CronCache


def test_a_text_is_parsed_once_and_then_handed_out_again() -> None:
    cache = CronCache()
    parsed = cache.parse("0 9 * * MON-FRI")
    assert parsed.text == "0 9 * * MON-FRI"
    assert cache.parse("0 9 * * MON-FRI") is parsed
    assert len(cache) == 1 and cache.size == DEFAULT_SIZE


def test_texts_are_held_as_written_each_with_its_normal_form() -> None:
    cache = CronCache()
    spaced = cache.parse("0  9 * * *")
    assert spaced.text == "0 9 * * *"
    assert cache.parse("0 9 * * *") is not spaced
    assert len(cache) == 2


def test_the_least_recently_used_text_is_dropped_past_the_bound() -> None:
    cache = CronCache(size=2)
    first = cache.parse("1 * * * *")
    second = cache.parse("2 * * * *")
    assert cache.parse("1 * * * *") is first  # now the most recently used
    cache.parse("3 * * * *")
    assert len(cache) == 2
    assert cache.parse("1 * * * *") is first
    assert cache.parse("2 * * * *") is not second  # it was dropped: parsed again


def test_a_text_that_does_not_parse_raises_and_is_not_kept() -> None:
    cache = CronCache()
    with pytest.raises(CronError, match="has 4 fields"):
        cache.parse("0 9 * *")
    assert len(cache) == 0


def test_a_copy_and_a_cleared_cache_are_independent() -> None:
    cache = CronCache(size=3)
    parsed = cache.parse("0 9 * * *")
    twin = cache.copy()
    twin.parse("0 10 * * *")
    assert (len(cache), len(twin), twin.size) == (1, 2, 3)
    assert twin.parse("0 9 * * *") is parsed
    cache.clear()
    assert (len(cache), len(twin)) == (0, 2)


def test_a_cache_holds_at_least_one_expression() -> None:
    with pytest.raises(ValueError, match="at least one expression, not 0"):
        CronCache(size=0)


# Mostly five fields that mostly parse; some that do not (a sixth field, 61, x, MON as a minute).
FIELD = st.sampled_from(["*", "*", "*", "*", "*", "5", "*/15", "1-5", "1,2", "L", "MON", "61", "x"])
TEXTS = st.builds(
    lambda fields, spaces: spaces.join(fields),
    st.one_of(
        *[st.lists(FIELD, min_size=5, max_size=5)] * 4, st.lists(FIELD, min_size=4, max_size=6)
    ),
    st.sampled_from([" ", "  "]),
)


# A fortnight of wall times at 07:00-10:00, every five minutes: some of most texts' days.
WALLS = [
    datetime(2026, 2, 23, 7) + timedelta(days=day, minutes=minute)
    for day in range(14)
    for minute in range(0, 180, 5)
]


def _reading(parse: Callable[[str], CronExpression], text: str) -> object:
    """What `parse(text)` gives: its normal text and which of `WALLS` match, or the error."""
    try:
        parsed = parse(text)
    except CronError as error:
        return f"CronError: {error}"
    return parsed.text, [parsed.matches(wall) for wall in WALLS]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(TEXTS, min_size=1, max_size=6),
    st.lists(st.integers(0, 5), min_size=1, max_size=40),
    st.integers(1, 4),
)
def test_a_cached_parse_reads_every_text_as_a_fresh_parse_does(
    pool: list[str], picks: list[int], size: int
) -> None:
    cache = CronCache(size=size)
    for pick in picks:
        text = pool[pick % len(pool)]
        assert _reading(cache.parse, text) == _reading(CronExpression, text)
        assert len(cache) <= size
